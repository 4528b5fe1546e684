import { formatFact, parseFactLine } from './fact-lines';
import type { Distillation, DistilledSegment } from './types';

/**
 * A distillation in seed 001's segment format — the text a reflector reads and the form whose
 * tokens count toward the reflection threshold:
 * `<observations>Date: …<segment><narrative>…</narrative><facts>* 🔴 (09:15) …</facts></segment>
 * </observations><current-task>…</current-task><suggested-response>…</suggested-response>`.
 */
export function formatDistillation(
  distillation: Pick<Distillation, 'date' | 'segments' | 'currentTask' | 'suggestedResponse'>,
): string {
  const lines = ['<observations>'];
  if (distillation.date !== null) lines.push(`Date: ${distillation.date}`, '');
  for (const segment of distillation.segments) lines.push(...segmentLines(segment), '');
  lines.push('</observations>');
  if (distillation.currentTask !== null) {
    lines.push('', '<current-task>', distillation.currentTask, '</current-task>');
  }
  if (distillation.suggestedResponse !== null) {
    lines.push('', '<suggested-response>', distillation.suggestedResponse, '</suggested-response>');
  }
  return lines.join('\n');
}

function segmentLines(segment: DistilledSegment): string[] {
  const lines = ['<segment>'];
  if (segment.narrative !== null) lines.push(`<narrative>${segment.narrative}</narrative>`);
  lines.push('<facts>', ...segment.facts.map((fact) => formatFact(fact)), '</facts>', '</segment>');
  return lines;
}

/**
 * Seed 001's `formatSegmentsForLog`: readable Markdown, a `####` heading per segment (its title,
 * else its narrative's first sentence), the narrative in italics, then the fact lines.
 */
export function formatSegmentsForLog(
  distillation: Pick<Distillation, 'segments' | 'currentTask'>,
): string {
  const blocks: string[] = [];
  distillation.segments.forEach((segment, index) => {
    const lines = [`#### ${segmentHeading(segment, index)}`];
    if (segment.narrative !== null) lines.push(`*${segment.narrative}*`);
    if (segment.facts.length > 0) lines.push('', ...segment.facts.map((fact) => formatFact(fact)));
    blocks.push(lines.join('\n'));
  });
  if (distillation.currentTask !== null) {
    blocks.push(`**Current task**: ${distillation.currentTask.replace(/\s*\n\s*/g, ' · ')}`);
  }
  return blocks.join('\n\n');
}

function segmentHeading(segment: DistilledSegment, index: number): string {
  if (segment.title !== null) return segment.title;
  const sentence = segment.narrative?.split(/(?<=[.!?])\s/)[0]?.trim();
  return sentence !== undefined && sentence !== '' ? sentence : `Segment ${index + 1}`;
}

/**
 * Seed 001's `optimizeForContext` over text (flat or segment format): keeps only the 🔴 fact
 * lines, plus `Date:` lines; 🟡 and 🟢 lines, tags and narratives go. For a briefing with a small
 * token budget (ADR-0020's ~2k): the durable rules and decisions, nothing else.
 */
export function optimizeForContext(observations: string): string {
  return observations
    .split('\n')
    .filter((line) => {
      const fact = parseFactLine(line);
      return fact !== null ? fact.priority === '🔴' : line.trim().startsWith('Date:');
    })
    .map((line) => line.trim())
    .join('\n');
}

/** optimizeForContext on a structured distillation: every segment keeps its 🔴 facts only. */
export function optimizeDistillationForContext<T extends Pick<Distillation, 'segments'>>(
  distillation: T,
): T {
  return {
    ...distillation,
    segments: distillation.segments.map((segment) => ({
      ...segment,
      facts: segment.facts.filter((fact) => fact.priority === '🔴'),
    })),
  };
}

/** The episode summary (SPEC §4.4 `summary`): the narratives of the episode's segments. */
export function episodeSummary(
  distillation: Pick<Distillation, 'segments'>,
  episodeId?: string,
): string | null {
  const narratives = distillation.segments
    .filter((segment) => episodeId === undefined || segment.episodeId === episodeId)
    .map((segment) => segment.narrative)
    .filter((narrative): narrative is string => narrative !== null);
  return narratives.length === 0 ? null : narratives.join(' ');
}
