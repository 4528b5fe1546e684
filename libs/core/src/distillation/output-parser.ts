import { parseFactLine, type FactLine } from './fact-lines';
import { attributeValue, findTagBlock, findTagBlocks, withoutBlocks } from './tag-blocks';

/**
 * How much of a distiller LLM's output was understood:
 * - `segments`: `<segment>` blocks (seed 001 MEM-7 format);
 * - `flat`: an `<observations>` block of fact lines without segments (seed 001 Loop A format);
 * - `list-fallback`: no usable `<observations>` block, but lines with 🔴/🟡/🟢 markers;
 * - `empty`: nothing at all, or an observations block without a fact or narrative;
 * - `unparseable`: text, but neither tags nor marked lines.
 */
export type ParseStatus = 'segments' | 'flat' | 'list-fallback' | 'empty' | 'unparseable';

export interface ParsedSegment {
  title: string | null;
  narrative: string | null;
  facts: FactLine[];
}

export interface ParsedDistillerOutput {
  status: ParseStatus;
  /** `Date: YYYY-MM-DD` of the observations block, when given. */
  date: string | null;
  /** Flat and fallback output come back as one segment without a narrative. */
  segments: ParsedSegment[];
  currentTask: string | null;
  suggestedResponse: string | null;
  /** A block's close tag was missing: the output was cut off (or the model lost track). */
  truncated: boolean;
  /** What was wrong and what was recovered, for logs and metrics; empty for clean output. */
  issues: string[];
  factCount: number;
}

export interface ParseOptions {
  /**
   * The `HH:MM` times the transcript showed. A fact time outside this set is hallucinated and
   * removed (seed 001 rule 1: never invent a clock time). Without it, times are kept as written.
   */
  knownTimes?: ReadonlySet<string>;
}

const TOP_LEVEL = ['observations', 'current-task', 'suggested-response'];
const BULLET_WITHOUT_MARKER = /^\s*(?:[-*•+]|\d+[.)])\s+(\S.*)$/;
const DATE_LINE = /^\s*Date:\s*(\d{4}-\d{2}-\d{2})\s*$/im;

/**
 * Parses a distiller LLM's output. Never throws on bad model output: it recovers what it can and
 * says so in `issues` — unclosed tags run to the next tag or the end (`truncated`), a last fact
 * line cut off mid-line is dropped, bullet lines without a marker are kept as 🟡, facts outside
 * segments become a segment of their own, marked lines anywhere are the fallback, invented clock
 * times are removed (`knownTimes`), duplicates are dropped.
 */
export function parseDistillerOutput(
  raw: string | null | undefined,
  options: ParseOptions = {},
): ParsedDistillerOutput {
  try {
    return parseOrThrow(typeof raw === 'string' ? raw : '', options);
  } catch (error) {
    // A parser bug must not lose the distillation: report it as unparseable output.
    return result('unparseable', [], {
      issues: [`parser failed: ${error instanceof Error ? error.message : String(error)}`],
    });
  }
}

function parseOrThrow(raw: string, options: ParseOptions): ParsedDistillerOutput {
  const text = raw.replace(/\r\n?/g, '\n').replace(/^\s*```[\w-]*\s*$/gm, '');
  if (text.trim() === '') return result('empty', [], { issues: ['empty output'] });
  const context: ParseContext = { issues: [], truncated: false, raw: text };
  const currentTask = blockText(text, 'current-task', context);
  const suggestedResponse = blockText(text, 'suggested-response', context);
  const observations = findTagBlock(text, 'observations', TOP_LEVEL.slice(1));

  let status: ParseStatus;
  let segments: ParsedSegment[];
  let date: string | null = null;
  if (observations !== null) {
    noteTruncation(observations.closed, 'observations', context);
    date = DATE_LINE.exec(observations.content)?.[1] ?? null;
    segments = segmentsOf(observations.content, context);
    status =
      segments.length === 0 ? 'empty' : hasSegmentTags(observations.content) ? 'segments' : 'flat';
    if (segments.length === 0) context.issues.push('observations block holds no fact or narrative');
  } else if (hasSegmentTags(text)) {
    context.issues.push('no <observations> block; read the <segment> blocks directly');
    segments = segmentsOf(text, context);
    status = segments.length === 0 ? 'empty' : 'segments';
  } else {
    const facts = factLines(withoutTopLevelBlocks(text), context, false);
    segments = facts.length === 0 ? [] : [{ title: null, narrative: null, facts }];
    status = facts.length === 0 ? 'unparseable' : 'list-fallback';
    context.issues.push(
      facts.length === 0
        ? 'no <observations> block and no lines with 🔴/🟡/🟢 markers'
        : `no <observations> block; recovered ${facts.length} marked lines`,
    );
  }
  segments = segments.map((segment) => checkTimes(segment, options, context));
  return result(status, segments, { date, currentTask, suggestedResponse, ...context });
}

interface ParseContext {
  issues: string[];
  truncated: boolean;
  /** The whole output: a block that runs to its very end was cut off there. */
  raw: string;
}

function result(
  status: ParseStatus,
  segments: ParsedSegment[],
  extra: Partial<Omit<ParsedDistillerOutput, 'status' | 'segments' | 'factCount'>>,
): ParsedDistillerOutput {
  return {
    status,
    date: extra.date ?? null,
    segments,
    currentTask: extra.currentTask ?? null,
    suggestedResponse: extra.suggestedResponse ?? null,
    truncated: extra.truncated ?? false,
    issues: extra.issues ?? [],
    factCount: segments.reduce((sum, segment) => sum + segment.facts.length, 0),
  };
}

function hasSegmentTags(text: string): boolean {
  return /<segment(\s[^<>]*)?>/i.test(text);
}

function segmentsOf(content: string, context: ParseContext): ParsedSegment[] {
  const blocks = findTagBlocks(content, 'segment', TOP_LEVEL);
  const segments: ParsedSegment[] = [];
  blocks.forEach((block, index) => {
    noteTruncation(block.closed, `segment ${index + 1}`, context);
    const segment = parseSegment(block.content, block.attributes, context);
    if (segment.narrative === null && segment.facts.length === 0) {
      context.issues.push(`segment ${index + 1} has no narrative and no facts; dropped`);
    } else {
      segments.push(segment);
    }
  });
  const outside = factLines(withoutBlocks(content, blocks), context, false);
  if (outside.length > 0) {
    if (blocks.length > 0) {
      context.issues.push(`${outside.length} fact lines outside any <segment>; kept as a segment`);
    }
    segments.push({ title: null, narrative: null, facts: outside });
  }
  return segments;
}

function parseSegment(content: string, attributes: string, context: ParseContext): ParsedSegment {
  const title =
    attributeValue(attributes, 'title') ??
    cleanText(findTagBlock(content, 'title', ['narrative', 'facts'])?.content);
  const narrativeBlock = findTagBlock(content, 'narrative', ['facts']);
  const factsBlock = findTagBlock(content, 'facts');
  if (narrativeBlock !== null) noteTruncation(narrativeBlock.closed, 'narrative', context);
  if (factsBlock !== null) noteTruncation(factsBlock.closed, 'facts', context);
  const factSource =
    factsBlock?.content ??
    withoutBlocks(
      content,
      findTagBlocks(content, 'narrative', ['facts']).concat(findTagBlocks(content, 'title')),
    );
  return {
    title,
    narrative: cleanText(narrativeBlock?.content),
    facts: factLines(factSource, context, factsBlock !== null),
  };
}

/** Marked lines; inside a `<facts>` block, bullets without a marker too (as 🟡). */
function factLines(content: string, context: ParseContext, inFactsBlock: boolean): FactLine[] {
  const facts: FactLine[] = [];
  const seen = new Set<string>();
  let unmarked = 0;
  for (const line of content.split('\n')) {
    let fact = parseFactLine(line);
    if (fact === null && inFactsBlock) {
      const bullet = BULLET_WITHOUT_MARKER.exec(line);
      if (bullet !== null) {
        fact = { priority: '🟡', time: null, text: bullet[1].trim() };
        unmarked += 1;
      }
    }
    if (fact === null) continue;
    if (isCutOffLine(line, context)) {
      context.issues.push('dropped the last fact line: the output ends in the middle of it');
      continue;
    }
    const key = `${fact.priority}|${fact.text.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    facts.push(fact);
  }
  if (unmarked > 0) {
    context.issues.push(`${unmarked} fact lines without a priority marker kept as 🟡`);
  }
  return facts;
}

/**
 * The output's very last line, not ended by a line break, when the output stopped before closing
 * its block: the model was cut off in the middle of it.
 */
function isCutOffLine(line: string, context: ParseContext): boolean {
  const trimmed = line.trimEnd();
  return (
    context.truncated && trimmed !== '' && context.raw.replace(/[ \t]+$/, '').endsWith(trimmed)
  );
}

function checkTimes(
  segment: ParsedSegment,
  options: ParseOptions,
  context: ParseContext,
): ParsedSegment {
  const known = options.knownTimes;
  if (known === undefined) return segment;
  let removed = 0;
  const facts = segment.facts.map((fact) => {
    if (fact.time === null || known.has(fact.time)) return fact;
    removed += 1;
    return { ...fact, time: null };
  });
  if (removed > 0) {
    context.issues.push(`${removed} fact times not in the transcript were removed`);
  }
  return { ...segment, facts };
}

function blockText(text: string, name: string, context: ParseContext): string | null {
  const block = findTagBlock(
    text,
    name,
    TOP_LEVEL.filter((tag) => tag !== name),
  );
  if (block === null) return null;
  noteTruncation(block.closed, name, context);
  return cleanText(block.content);
}

function noteTruncation(closed: boolean, name: string, context: ParseContext): void {
  if (closed) return;
  context.truncated = true;
  context.issues.push(`<${name}> is not closed (truncated output); kept what came before the cut`);
}

function withoutTopLevelBlocks(text: string): string {
  const blocks = TOP_LEVEL.flatMap((name) => findTagBlocks(text, name, TOP_LEVEL));
  return withoutBlocks(text, blocks);
}

function cleanText(text: string | undefined): string | null {
  if (text === undefined) return null;
  const cleaned = text
    .replace(/<\/?[a-z][\w-]*(\s[^<>]*)?>/gi, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return cleaned === '' ? null : cleaned;
}
