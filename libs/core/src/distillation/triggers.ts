import { earliest, isoDay, latest } from './time';
import { createHash } from 'node:crypto';
import type {
  CompactionPending,
  EpisodeClosed,
  EpochMillis,
  SessionEnded,
} from '@engram/contracts';
import type {
  Distillation,
  DistillationMethod,
  DistillPrompt,
  DistillToolCall,
  DistillValidation,
  SegmentRange,
  TriggerKind,
} from './types';

/** SPEC §8 / seed 001: a session end is distilled only when the user wrote this many messages. */
export const MIN_USER_MESSAGES_FOR_SESSION_END = 5;

/** What starts a distillation, with the event that carried it. */
export type DistillationTrigger =
  | { kind: 'EpisodeClosed'; event: EpisodeClosed }
  | { kind: 'SessionEnded'; event: SessionEnded }
  | { kind: 'CompactionPending'; event: CompactionPending };

/**
 * The idempotency key of a distillation: sha256 of sessionId, trigger and the timestamp of the
 * window's first entry (seed 001 "Idempotency"). A redelivered trigger has the same key and must
 * produce nothing new; a compaction and a shutdown of one session have different triggers, so
 * both are distilled. The three parts are JSON-encoded before hashing, so no two different
 * triples can collide by concatenation; the timestamp is ISO 8601 (UTC).
 */
export function distillationDedupeKey(
  sessionId: string,
  trigger: TriggerKind,
  firstEntryTimestamp: EpochMillis,
): string {
  const parts = JSON.stringify([sessionId, trigger, new Date(firstEntryTimestamp).toISOString()]);
  return createHash('sha256').update(parts, 'utf8').digest('hex');
}

/** The events a distiller has for the trigger's session (any order, duplicates allowed). */
export interface SessionEvents {
  prompts: readonly DistillPrompt[];
  toolCalls: readonly DistillToolCall[];
  validations?: readonly DistillValidation[];
  /** Episode ranges of the session (from the segmenter): each becomes a segment. */
  episodes?: readonly SegmentRange[];
}

/** The events one distillation reads, with its identity. */
export interface DistillationWindow {
  tenantId: string;
  projectId: string;
  sessionId: string;
  trigger: TriggerKind;
  triggerEventId: string;
  triggerAt: EpochMillis;
  episodeId: string | null;
  dedupeKey: string;
  firstEntryAt: EpochMillis | null;
  lastEntryAt: EpochMillis | null;
  /** Deduplicated by eventId, ordered by promptId then time. */
  prompts: DistillPrompt[];
  /** Deduplicated by eventId, ordered by promptId, stepIndex, time. */
  toolCalls: DistillToolCall[];
  validations: DistillValidation[];
  /** At least one; ranges cover the window's prompts. */
  segments: SegmentRange[];
  /** False only for a compaction (the work goes on). */
  closed: boolean;
}

export type WindowDecision =
  { kind: 'distill'; window: DistillationWindow } | { kind: 'skip'; reason: string };

/**
 * Whether a trigger is distilled, and over which events:
 * - EpisodeClosed: the episode's prompt range, one segment;
 * - SessionEnded: the whole session, one segment per known episode — skipped below
 *   MIN_USER_MESSAGES_FOR_SESSION_END user messages (`userMessageCount`, or the user prompts
 *   seen when that is 0);
 * - CompactionPending: `firstPromptId..lastPromptId` (open ends: the session start, the
 *   compaction's time), one segment per known episode.
 * A window without a single event is skipped: there is nothing to distill.
 */
export function distillationWindow(
  trigger: DistillationTrigger,
  events: SessionEvents,
): WindowDecision {
  const event = trigger.event;
  const range = promptRange(trigger);
  const prompts = uniqueById(events.prompts)
    .filter((p) => p.sessionId === event.sessionId && inRange(p, range))
    .sort((a, b) => a.promptId - b.promptId || a.timestamp - b.timestamp);
  const toolCalls = uniqueById(events.toolCalls)
    .filter((c) => c.sessionId === event.sessionId && inRange(c, range))
    .sort(
      (a, b) => a.promptId - b.promptId || a.stepIndex - b.stepIndex || a.timestamp - b.timestamp,
    );
  if (trigger.kind === 'SessionEnded') {
    const userPrompts = prompts.filter((p) => p.source === 'user').length;
    const count = Math.max(trigger.event.userMessageCount, userPrompts);
    if (count < MIN_USER_MESSAGES_FOR_SESSION_END) {
      return {
        kind: 'skip',
        reason: `session has ${count} user messages; a session end is distilled from ${MIN_USER_MESSAGES_FOR_SESSION_END}`,
      };
    }
  }
  if (prompts.length === 0 && toolCalls.length === 0) {
    return { kind: 'skip', reason: `no prompts or tool calls in the ${trigger.kind} window` };
  }
  const times = [...prompts, ...toolCalls].map((e) => e.timestamp);
  const firstEntryAt = earliest(times);
  const lastEntryAt = latest(times);
  const validations = uniqueById(events.validations ?? []).filter(
    (v) => v.timestamp >= firstEntryAt && v.timestamp <= Math.max(lastEntryAt, event.timestamp),
  );
  const episodeId = trigger.kind === 'EpisodeClosed' ? trigger.event.episodeId : null;
  return {
    kind: 'distill',
    window: {
      tenantId: event.tenantId,
      projectId: event.projectId,
      sessionId: event.sessionId,
      trigger: trigger.kind,
      triggerEventId: event.eventId,
      triggerAt: event.timestamp,
      episodeId,
      dedupeKey: distillationDedupeKey(event.sessionId, trigger.kind, firstEntryAt),
      firstEntryAt,
      lastEntryAt,
      prompts,
      toolCalls,
      validations: validations.sort((a, b) => a.timestamp - b.timestamp),
      segments: segmentsOf(trigger, range, prompts, events.episodes ?? []),
      closed: trigger.kind !== 'CompactionPending',
    },
  };
}

/** The fields of a distillation that its window decides (identity, trigger, times), and method. */
export type DistillationHeader = Omit<
  Distillation,
  'segments' | 'currentTask' | 'suggestedResponse' | 'sourceEventIds'
>;

/** The header of a window's distillation, however it is distilled. */
export function distillationHeader(
  window: DistillationWindow,
  method: DistillationMethod,
): DistillationHeader {
  return {
    dedupeKey: window.dedupeKey,
    tenantId: window.tenantId,
    projectId: window.projectId,
    sessionId: window.sessionId,
    episodeId: window.episodeId,
    trigger: window.trigger,
    triggerAt: window.triggerAt,
    method,
    firstEntryAt: window.firstEntryAt,
    lastEntryAt: window.lastEntryAt,
    date: window.firstEntryAt === null ? null : isoDay(window.firstEntryAt),
  };
}

interface PromptRange {
  first: number;
  last: number;
  /** Events after this time are not in the window (a compaction sees only its past). */
  until: number;
}

function promptRange(trigger: DistillationTrigger): PromptRange {
  switch (trigger.kind) {
    case 'EpisodeClosed':
      return {
        first: trigger.event.firstPromptId,
        last: trigger.event.lastPromptId,
        until: Infinity,
      };
    case 'CompactionPending':
      return {
        first: trigger.event.firstPromptId ?? -Infinity,
        last: trigger.event.lastPromptId ?? Infinity,
        until: trigger.event.lastPromptId === null ? trigger.event.timestamp : Infinity,
      };
    case 'SessionEnded':
      return { first: -Infinity, last: Infinity, until: Infinity };
  }
}

function inRange(event: { promptId: number; timestamp: number }, range: PromptRange): boolean {
  return (
    event.promptId >= range.first && event.promptId <= range.last && event.timestamp <= range.until
  );
}

function segmentsOf(
  trigger: DistillationTrigger,
  range: PromptRange,
  prompts: readonly DistillPrompt[],
  episodes: readonly SegmentRange[],
): SegmentRange[] {
  const first = prompts.length > 0 ? prompts[0].promptId : range.first;
  const last = prompts.length > 0 ? prompts[prompts.length - 1].promptId : range.last;
  if (trigger.kind === 'EpisodeClosed') {
    return [{ episodeId: trigger.event.episodeId, firstPromptId: first, lastPromptId: last }];
  }
  const overlapping = [...episodes]
    .filter((e) => e.lastPromptId >= first && e.firstPromptId <= last)
    .sort((a, b) => a.firstPromptId - b.firstPromptId);
  if (overlapping.length === 0) {
    return [{ episodeId: null, firstPromptId: first, lastPromptId: last }];
  }
  return overlapping.map((episode, index) => ({
    episodeId: episode.episodeId,
    // The first and last segments stretch to the window's ends, so no event falls outside.
    firstPromptId: index === 0 ? Math.min(first, episode.firstPromptId) : episode.firstPromptId,
    lastPromptId:
      index === overlapping.length - 1
        ? Math.max(last, episode.lastPromptId)
        : overlapping[index + 1].firstPromptId - 1,
  }));
}

function uniqueById<T extends { eventId: string }>(events: readonly T[]): T[] {
  const seen = new Set<string>();
  return events.filter((event) => {
    if (seen.has(event.eventId)) return false;
    seen.add(event.eventId);
    return true;
  });
}
