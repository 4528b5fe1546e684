import { annotateEpisode } from '../../segmentation/annotation';
import type { EpisodeAnnotation } from '../../segmentation/annotation-types';
import { wordCount } from '../../segmentation/intent-keywords';
import { redactSecrets } from '../../redaction';
import { earliest, latest } from '../time';
import { truncateChars } from '../tokens';
import { distillationHeader, type DistillationWindow } from '../triggers';
import {
  buildTranscript,
  compareText,
  oneLine,
  type PromptEntry,
  type ToolEntry,
  type TranscriptEntry,
} from '../transcript';
import {
  priorityRank,
  type Distillation,
  type DistilledFact,
  type DistilledSegment,
  type SegmentRange,
} from '../types';
import { assertionFacts } from './assertions';
import { errorFacts } from './errors';
import { explorationFact, fileChangeFacts } from './files';
import { narrativeOf, segmentTitle } from './narrative';

const MAX_TASK_CHARS = 200;

/**
 * The distiller without an LLM (the default on a laptop): one segment per episode range of the
 * window, each with a narrative (what was asked or done, the work in words, the outcome and the
 * lesson) and facts that say what was learned: user assertions (corrections, rules, decisions,
 * state changes), errors and their fixes, commands that worked after failing, and the changes
 * made as reports of the requests they served; file bookkeeping and exploration stay 🟢. Deterministic, and it never invents a time: every fact's time is
 * the clock time of one of its source events.
 */
export function distillExtractively(window: DistillationWindow): Distillation {
  const transcript = buildTranscript(window.prompts, window.toolCalls);
  const parts = window.segments.map((range, index) => ({
    range,
    entries: transcript.filter(
      (e) => e.promptId >= range.firstPromptId && e.promptId <= range.lastPromptId,
    ),
    closed: window.closed || index < window.segments.length - 1,
  }));
  const distilled = parts
    .filter((part) => part.entries.length > 0)
    .map((part) => distillSegment(window, part.range, part.entries, part.closed));
  const segments = dedupeAcrossSegments(distilled.map((d) => d.segment));
  const last = distilled[distilled.length - 1];
  const { currentTask, suggestedResponse } = taskState(window, transcript, last);
  return {
    ...distillationHeader(window, 'extractive'),
    segments,
    currentTask,
    suggestedResponse,
    sourceEventIds: transcript.map((entry) => entry.eventId),
  };
}

interface SegmentResult {
  segment: DistilledSegment;
  annotation: EpisodeAnnotation;
  unresolved: DistilledFact[];
}

function distillSegment(
  window: DistillationWindow,
  range: SegmentRange,
  entries: readonly TranscriptEntry[],
  closed: boolean,
): SegmentResult {
  const userPrompts = entries.filter(
    (e): e is PromptEntry => e.kind === 'prompt' && e.source === 'user',
  );
  const tools = entries.filter((e): e is ToolEntry => e.kind === 'tool');
  const annotation = annotateEpisode({
    firstPromptId: range.firstPromptId,
    lastPromptId: range.lastPromptId,
    prompts: window.prompts.map((p) => ({ ...p, text: redactSecrets(p.text).text })),
    toolCalls: window.toolCalls,
    validations: validationsOf(window, entries),
    closed,
  });
  const errors = errorFacts(tools);
  const exploration = explorationFact(tools);
  const facts = orderFacts(
    dedupeFacts([
      ...assertionFacts(userPrompts),
      ...errors,
      ...fileChangeFacts(tools, userPrompts),
      ...(exploration === null ? [] : [exploration]),
    ]),
  );
  return {
    segment: {
      episodeId: range.episodeId,
      title: segmentTitle(annotation),
      narrative: narrativeOf(annotation, userPrompts, tools, facts),
      facts,
      sourceEventIds: entries.map((entry) => entry.eventId),
    },
    annotation,
    unresolved: errors.filter((fact) => fact.kind === 'error-unresolved'),
  };
}

/** QA verdicts between the segment's first event and its last (the last segment: any later). */
function validationsOf(window: DistillationWindow, entries: readonly TranscriptEntry[]) {
  const start = earliest(entries.map((e) => e.timestamp));
  const end = latest(entries.map((e) => e.timestamp));
  const lastSegment = entries.some((e) => e.timestamp === window.lastEntryAt);
  return window.validations
    .filter((v) => v.timestamp >= start && (v.timestamp <= end || lastSegment))
    .map((v) => ({ passed: v.passed, timestamp: v.timestamp }));
}

/** In time order (seed 001's fact lists read as a timeline), more durable first at one time. */
function orderFacts(facts: DistilledFact[]): DistilledFact[] {
  return facts
    .map((fact, index) => ({ fact, index }))
    .sort(
      (a, b) =>
        (a.fact.at ?? 0) - (b.fact.at ?? 0) ||
        priorityRank(a.fact.priority) - priorityRank(b.fact.priority) ||
        a.index - b.index,
    )
    .map(({ fact }) => fact);
}

function dedupeFacts(facts: readonly DistilledFact[]): DistilledFact[] {
  const byText = new Map<string, DistilledFact>();
  for (const fact of facts) {
    const key = fact.text.toLowerCase();
    const existing = byText.get(key);
    if (existing === undefined) {
      byText.set(key, fact);
    } else if (priorityRank(fact.priority) < priorityRank(existing.priority)) {
      byText.set(key, {
        ...fact,
        sourceEventIds: [...new Set([...existing.sourceEventIds, ...fact.sourceEventIds])],
      });
    }
  }
  return [...byText.values()];
}

/** A fact stated in two segments (a rule repeated) is kept in the first only. */
function dedupeAcrossSegments(segments: DistilledSegment[]): DistilledSegment[] {
  const seen = new Set<string>();
  return segments.map((segment) => ({
    ...segment,
    facts: segment.facts.filter((fact) => {
      const key = fact.text.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }),
  }));
}

/**
 * `<current-task>` and `<suggested-response>` from the events: work is unfinished when the window
 * is a compaction, the last segment's outcome is not success, or a command is still failing.
 */
function taskState(
  window: DistillationWindow,
  transcript: readonly TranscriptEntry[],
  last: SegmentResult | undefined,
): { currentTask: string | null; suggestedResponse: string | null } {
  const intent = lastIntent(transcript);
  const outcome = last?.annotation.outcome ?? 'unknown';
  const unresolved = last?.unresolved ?? [];
  const unfinished =
    window.trigger === 'CompactionPending' ||
    unresolved.length > 0 ||
    (outcome !== 'success' && outcome !== 'unknown');
  if (!unfinished || intent === null) {
    return {
      currentTask: null,
      suggestedResponse: window.trigger === 'SessionEnded' ? 'Session completed normally.' : null,
    };
  }
  const lines = [`Primary: ${intent}`];
  if (unresolved.length > 0) {
    lines.push(`Blocked on: ${unresolved.map((fact) => fact.text).join('; ')}`);
  }
  const suggestedResponse =
    window.trigger === 'CompactionPending'
      ? `Continue with the last user request: "${intent}"`
      : `Unfinished (outcome: ${outcome}); resume from the last user request: "${intent}"`;
  return { currentTask: lines.join('\n'), suggestedResponse };
}

/** The last substantive user prompt of the window (the last user prompt when all are terse). */
function lastIntent(transcript: readonly TranscriptEntry[]): string | null {
  const prompts = transcript
    .filter((e): e is PromptEntry => e.kind === 'prompt' && e.source === 'user' && e.text !== '')
    .sort((a, b) => a.promptId - b.promptId || compareText(a.eventId, b.eventId));
  const chosen =
    [...prompts].reverse().find((p) => wordCount(p.text) >= 5) ?? prompts[prompts.length - 1];
  return chosen === undefined ? null : truncateChars(oneLine(chosen.text), MAX_TASK_CHARS);
}
