import type { EpisodeAnnotation } from '../../segmentation/annotation-types';
import { intentKeywords } from '../../segmentation/intent-keywords';
import { formatDuration } from '../time';
import { truncateChars } from '../tokens';
import { oneLine, type PromptEntry, type ToolEntry } from '../transcript';
import type { DistilledFact } from '../types';
import { requestAsAction } from './actions';

const TOPIC_WORDS = 4;

/** Path parts that name no topic (`src/auth/x.ts` is about auth, not about src). */
const PATH_NOISE: ReadonlySet<string> = new Set([
  'src',
  'lib',
  'libs',
  'app',
  'apps',
  'dist',
  'index',
  'main',
  'pkg',
  'packages',
]);
const INTENT_CHARS = 180;
const LESSON_CHARS = 220;
const EDITED_SHOWN = 3;
const TITLE_CHARS = 72;

/**
 * The words a segment is about: the intent keywords (seed 000) of its user prompts, most frequent
 * first (then first seen), each shown in the first form the user wrote it ("refresh", not the
 * stem "refresh"; "configuration", not "configur").
 */
export function topicWords(userPrompts: readonly PromptEntry[], limit = TOPIC_WORDS): string[] {
  const counts = new Map<string, number>();
  const surface = new Map<string, string>();
  for (const prompt of userPrompts) {
    for (const token of prompt.text.split(/\s+/)) {
      const word = token.replace(/^[^\w./-]+|[^\w/]+$/g, '');
      for (const stem of intentKeywords(word)) {
        if (PATH_NOISE.has(stem) || stem.includes('.')) continue;
        counts.set(stem, (counts.get(stem) ?? 0) + 1);
        if (!surface.has(stem)) surface.set(stem, surfaceForm(word, stem));
      }
    }
  }
  return [...counts]
    .map(([stem, count], index) => ({ stem, count, index }))
    .sort((a, b) => b.count - a.count || a.index - b.index)
    .slice(0, limit)
    .map(({ stem }) => surface.get(stem) ?? stem);
}

/** A keyword's form in the user's token: the token itself when it is one word, else the stem. */
function surfaceForm(token: string, stem: string): string {
  const lower = token.toLowerCase();
  return /^[a-z]+$/.test(lower) && lower.startsWith(stem.slice(0, 3)) ? lower : stem;
}

/** The segment's title: its representative intent, cut short. */
export function segmentTitle(annotation: EpisodeAnnotation): string | null {
  return annotation.intent === null ? null : truncateChars(oneLine(annotation.intent), TITLE_CHARS);
}

/**
 * 1–3 sentences a person would write (seed 001's operational context: "Debugged the Inngest worker
 * registration failure. Root cause: … Fixed by …"), all from the events:
 * 1. the intent, as a report when the first substantive request asks for an action ("Fixed the
 *    refresh logic in src/auth/refresh.ts (the checkout test fails since the token refresh
 *    change)."), else as what the user asked;
 * 2. what was done, in words ("Read 2 files, edited src/auth/refresh.ts and ran 2 commands.");
 * 3. the outcome and the most durable lesson of the segment ("Done in 11 min; correction: don't
 *    mock Date.now in the refresh test, use vitest fake timers …").
 */
export function narrativeOf(
  annotation: EpisodeAnnotation,
  userPrompts: readonly PromptEntry[],
  tools: readonly ToolEntry[] = [],
  facts: readonly DistilledFact[] = [],
): string | null {
  const sentences = [
    intentSentence(annotation, userPrompts),
    workSentence(tools),
    outcomeSentence(annotation, facts),
  ].filter((sentence): sentence is string => sentence !== null);
  return sentences.length === 0 ? null : sentences.join(' ');
}

function intentSentence(
  annotation: EpisodeAnnotation,
  userPrompts: readonly PromptEntry[],
): string | null {
  const intent = annotation.intent ?? userPrompts.find((p) => p.text.trim() !== '')?.text ?? null;
  if (intent === null) return null;
  const text = oneLine(intent.replace(/<\/?[a-z][\w-]*>/gi, ' '));
  const action = requestAsAction(text);
  const done = annotation.outcome === 'success' || annotation.outcome === 'unknown';
  if (action !== null && done) return sentence(truncateChars(action, INTENT_CHARS));
  const quoted = `"${truncateChars(text, INTENT_CHARS)}"`;
  if (action !== null) return sentence(`Worked on ${quoted}`);
  const asked = /\?\s*$/.test(text) || /\b(?:can|could|would) you\b|\bplease\b/i.test(text);
  return sentence(`${asked ? 'The user asked' : 'The user said'} ${quoted}`);
}

/** "Read 3 files, edited a.ts and b.ts, and ran the tests and 2 other commands." */
function workSentence(tools: readonly ToolEntry[]): string | null {
  const read = new Set(
    tools.filter((t) => t.activity === 'investigate').flatMap((t) => t.filePaths),
  );
  const edited: string[] = [];
  for (const tool of tools) {
    if (tool.command !== null || tool.activity !== 'execute' || tool.outcome !== 'ok') continue;
    for (const path of tool.filePaths) if (!edited.includes(path)) edited.push(path);
  }
  const commands = [...new Set(tools.filter((t) => t.command !== null).map((t) => t.command))];
  const parts: string[] = [];
  const searches = tools.filter((t) => t.activity === 'investigate' && t.filePaths.length === 0);
  if (read.size > 0) parts.push(`read ${plural(read.size, 'file')}`);
  else if (searches.length > 0) parts.push(`searched the code`);
  if (edited.length > 0) {
    parts.push(
      edited.length <= EDITED_SHOWN
        ? `edited ${joinWords(edited)}`
        : `edited ${plural(edited.length, 'file')} (${edited.slice(0, EDITED_SHOWN - 1).join(', ')} …)`,
    );
  }
  const purposes = commandPurposes(commands as string[]);
  if (purposes.length > 0) parts.push(joinWords(purposes));
  if (parts.length === 0) return null;
  const text = joinWords(parts);
  return sentence(`${text.charAt(0).toUpperCase()}${text.slice(1)}`);
}

/** What the commands did, in words: "ran the tests", "committed", "ran 3 other commands". */
function commandPurposes(commands: readonly string[]): string[] {
  const said: string[] = [];
  let others = 0;
  for (const command of commands) {
    const purpose = PURPOSE_WORDS.find(([pattern]) => pattern.test(command))?.[1] ?? null;
    if (purpose === null) others += 1;
    else if (!said.includes(purpose)) said.push(purpose);
  }
  if (others > 0) {
    said.push(
      said.length > 0
        ? `ran ${plural(others, 'other command')}`
        : `ran ${plural(others, 'command')}`,
    );
  }
  return said;
}

const PURPOSE_WORDS: readonly [RegExp, string][] = [
  [/\bgit\s+commit\b/, 'committed'],
  [/\bgit\s+push\b/, 'pushed'],
  [/\b(?:test|tests|vitest|jest|pytest|mocha|e2e)\b/, 'ran the tests'],
  [/\b(?:tsc|build|webpack|compile)\b/, 'built'],
  [/\b(?:eslint|lint|ruff|flake8|prettier)\b/, 'linted'],
  [/\b(?:npm|pnpm|yarn|pip|uv)\s+(?:install|i|add)\b/, 'installed dependencies'],
  [/\bmigrat/, 'ran the migrations'],
];

/** Kinds of fact a narrative names as the lesson, most telling first. */
const LESSON_KINDS: readonly NonNullable<DistilledFact['kind']>[] = [
  'correction',
  'error-resolution',
  'command-fix',
  'decision',
  'state-change',
  'rule',
  'preference',
];

function outcomeSentence(
  annotation: EpisodeAnnotation,
  facts: readonly DistilledFact[],
): string | null {
  const duration = formatDuration(annotation.durationMs);
  const outcome: string | null =
    annotation.outcome === 'success'
      ? `Done in ${duration}`
      : annotation.outcome === 'unknown'
        ? null
        : `${OUTCOME_WORDS[annotation.outcome] ?? `Ended (${annotation.outcome})`} after ${duration}`;
  const lesson = LESSON_KINDS.map((kind) =>
    facts.find((fact) => fact.kind === kind && fact.priority === '🔴'),
  ).find((fact) => fact !== undefined);
  const unresolved = facts.find(
    (fact) => fact.kind === 'error-unresolved' && fact.priority !== '🟢',
  );
  const key = unresolved ?? lesson;
  const keyText = key === undefined ? null : lowerFirst(truncateChars(key.text, LESSON_CHARS));
  if (outcome === null && keyText === null) return null;
  if (outcome === null) return sentence(`${keyText!.charAt(0).toUpperCase()}${keyText!.slice(1)}`);
  return sentence(keyText === null ? outcome : `${outcome}; ${keyText}`);
}

const OUTCOME_WORDS: Readonly<Record<string, string>> = {
  failure: 'Not finished',
  partial: 'Partly done',
  ongoing: 'Still going',
};

function lowerFirst(text: string): string {
  return /^[A-Z][a-z]/.test(text) ? `${text.charAt(0).toLowerCase()}${text.slice(1)}` : text;
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?…]["'`)]?$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

function joinWords(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
