import type { DistillationTrigger, SessionEvents } from './triggers';
import type { DistillPrompt, DistillToolCall, DistillValidation, SegmentRange } from './types';

/**
 * The distiller service's state of one open session (SPEC §8, §11): the events a trigger's window
 * reads, the segmenter's episode ranges, and the triggers waiting for their events. Plain JSON,
 * so the service keeps it in a compacted changelog as it is. Pure: the service decides nothing
 * itself, it applies these functions inside its transactions.
 */
export interface DistillerSession {
  v: 1;
  sessionId: string;
  tenantId: string;
  projectId: string;
  prompts: DistillPrompt[];
  toolCalls: DistillToolCall[];
  validations: DistillValidation[];
  /** Episode ranges of the session; an episode still open has `lastPromptId` null. */
  episodes: DistillerEpisodeRange[];
  /** Triggers read but not yet distilled, oldest first. */
  pending: PendingDistillation[];
  /** Latest event time of the session. */
  lastActivityAt: number;
  /**
   * When the service last received anything of the session (processing time): a silent session
   * is dropped by this, never by event times, which a backlog or replay runs through in seconds.
   */
  lastSeenAt: number;
  /** Time of the SessionEnded, once distilled. */
  endedAt: number | null;
  /**
   * When the service distilled the SessionEnded (processing time, not event time): the grace for
   * the segmenter's late boundaries runs from here, because the segmenter lags the service by
   * processing time, whatever the events' times (a replay of a whole day arrives in seconds).
   */
  endSeenAt: number | null;
  /** The segmenter closed the session's last episode (`session_end`): no boundary will follow. */
  finalCloseSeen: boolean;
  /**
   * Memory id → order key of the window whose version was written (memory-versions.ts), so a
   * version from a canonically earlier window is not written over it. Absent in old records.
   */
  memoryVersions?: Record<string, string>;
}

export interface DistillerEpisodeRange {
  episodeId: string;
  firstPromptId: number;
  lastPromptId: number | null;
}

/** Offsets of one partition number in the prompts, tool-calls and boundaries topics. */
export interface DistillerInputOffsets {
  prompts: number;
  toolCalls: number;
  boundaries: number;
}

/**
 * A trigger waiting for its session's events: prompts and tool calls travel on other topics, so
 * a trigger is distilled only once the service has consumed their partitions up to the end
 * offsets they had when the trigger was read (everything the agent reported before it). A
 * session end or compaction also waits for the episode boundaries published before it, so its
 * segments are the episodes the segmenter had closed, however the topics were interleaved.
 */
export interface PendingDistillation {
  trigger: DistillationTrigger;
  until: DistillerInputOffsets;
}

/** Bounds that keep one session's changelog record far below the broker's 1 MB limit. */
export interface DistillerSessionLimits {
  maxPrompts: number;
  maxPromptChars: number;
  maxToolCalls: number;
  maxErrorChars: number;
  maxValidations: number;
}

export const DEFAULT_DISTILLER_SESSION_LIMITS: Readonly<DistillerSessionLimits> = Object.freeze({
  maxPrompts: 400,
  maxPromptChars: 2_000,
  maxToolCalls: 1_500,
  maxErrorChars: 500,
  maxValidations: 200,
});

/** When an ended or silent session's state leaves the changelog. */
export interface DistillerRetention {
  /**
   * After a SessionEnded, how long (processing time) the segmenter's late boundaries may still
   * come, unless its final close did.
   */
  endGraceMs: number;
  /**
   * A session silent this long (processing time) is dropped: the segmenter has closed its
   * episodes long before.
   */
  idleMs: number;
}

export const DEFAULT_DISTILLER_RETENTION: Readonly<DistillerRetention> = Object.freeze({
  endGraceMs: 10 * 60_000,
  idleMs: 24 * 60 * 60_000,
});

/** An open episode's end in a window: past any prompt id, but JSON-safe. */
const OPEN_END = Number.MAX_SAFE_INTEGER;

export function newDistillerSession(event: {
  sessionId: string;
  tenantId: string;
  projectId: string;
}): DistillerSession {
  return {
    v: 1,
    sessionId: event.sessionId,
    tenantId: event.tenantId,
    projectId: event.projectId,
    prompts: [],
    toolCalls: [],
    validations: [],
    episodes: [],
    pending: [],
    lastActivityAt: 0,
    lastSeenAt: 0,
    endedAt: null,
    endSeenAt: null,
    finalCloseSeen: false,
  };
}

/** Keeps a prompt (text cut to the limit); false for a duplicate (same eventId). */
export function addPrompt(
  session: DistillerSession,
  prompt: DistillPrompt,
  limits: DistillerSessionLimits = DEFAULT_DISTILLER_SESSION_LIMITS,
): boolean {
  if (session.prompts.some((known) => known.eventId === prompt.eventId)) return false;
  session.prompts.push({ ...prompt, text: prompt.text.slice(0, limits.maxPromptChars) });
  // The oldest go first: a window's start moves, its end (the recent work) stays intact.
  if (session.prompts.length > limits.maxPrompts) session.prompts.shift();
  noteActivity(session, prompt.timestamp);
  return true;
}

/** Keeps a tool call (error message cut to the limit); false for a duplicate. */
export function addToolCall(
  session: DistillerSession,
  call: DistillToolCall,
  limits: DistillerSessionLimits = DEFAULT_DISTILLER_SESSION_LIMITS,
): boolean {
  if (session.toolCalls.some((known) => known.eventId === call.eventId)) return false;
  session.toolCalls.push({
    ...call,
    errorMessage: call.errorMessage?.slice(0, limits.maxErrorChars) ?? null,
  });
  if (session.toolCalls.length > limits.maxToolCalls) session.toolCalls.shift();
  noteActivity(session, call.timestamp);
  return true;
}

/** Keeps a QA verdict; false for a duplicate. */
export function addValidation(
  session: DistillerSession,
  validation: DistillValidation,
  limits: DistillerSessionLimits = DEFAULT_DISTILLER_SESSION_LIMITS,
): boolean {
  if (session.validations.some((known) => known.eventId === validation.eventId)) return false;
  session.validations.push(validation);
  if (session.validations.length > limits.maxValidations) session.validations.shift();
  noteActivity(session, validation.timestamp);
  return true;
}

/** An EpisodeOpened: the range starts (idempotent). */
export function noteEpisodeOpened(
  session: DistillerSession,
  episode: { episodeId: string; firstPromptId: number; timestamp: number },
): void {
  noteActivity(session, episode.timestamp);
  if (session.episodes.some((known) => known.episodeId === episode.episodeId)) return;
  session.episodes.push({
    episodeId: episode.episodeId,
    firstPromptId: episode.firstPromptId,
    lastPromptId: null,
  });
}

/** An EpisodeClosed: the range ends (opened here if its EpisodeOpened was never seen). */
export function noteEpisodeClosed(
  session: DistillerSession,
  episode: { episodeId: string; firstPromptId: number; lastPromptId: number; reason: string },
): void {
  const known = session.episodes.find((e) => e.episodeId === episode.episodeId);
  if (known) known.lastPromptId = episode.lastPromptId;
  else session.episodes.push({ ...episode, lastPromptId: episode.lastPromptId });
  if (episode.reason === 'session_end' && openEpisodes(session) === 0) {
    session.finalCloseSeen = true;
  }
}

function openEpisodes(session: DistillerSession): number {
  return session.episodes.filter((e) => e.lastPromptId === null).length;
}

function noteActivity(session: DistillerSession, at: number): void {
  session.lastActivityAt = Math.max(session.lastActivityAt, at);
}

/** The service received something of the session at `now` (processing time). */
export function noteSeen(session: DistillerSession, now: number): void {
  session.lastSeenAt = Math.max(session.lastSeenAt, now);
}

/** The session's events as distillationWindow reads them (an open episode reaches to the end). */
export function sessionEventsOf(session: DistillerSession): SessionEvents {
  const episodes: SegmentRange[] = session.episodes.map((e) => ({
    episodeId: e.episodeId,
    firstPromptId: e.firstPromptId,
    lastPromptId: e.lastPromptId ?? OPEN_END,
  }));
  return {
    prompts: session.prompts,
    toolCalls: session.toolCalls,
    validations: session.validations,
    episodes,
  };
}

/** Whether both input partitions are consumed up to where the trigger needs them. */
export function inputsReached(
  until: DistillerInputOffsets,
  consumed: DistillerInputOffsets,
): boolean {
  return (
    consumed.prompts >= until.prompts &&
    consumed.toolCalls >= until.toolCalls &&
    consumed.boundaries >= until.boundaries
  );
}

/**
 * What a trigger read now waits for, given the inputs' end offsets: an episode close needs no
 * later boundary (its range is exact), the other triggers need the boundaries before them.
 */
export function waitTarget(
  trigger: DistillationTrigger,
  ends: DistillerInputOffsets,
): DistillerInputOffsets {
  return trigger.kind === 'EpisodeClosed' ? { ...ends, boundaries: 0 } : ends;
}

/**
 * Removes and returns the waiting triggers whose events are all consumed, in arrival order: a
 * trigger never overtakes an earlier one of its session (a compaction before the end). `now` is
 * the processing time, noted when the session's end is taken.
 */
export function takeReadyTriggers(
  session: DistillerSession,
  consumed: DistillerInputOffsets,
  now: number,
): DistillationTrigger[] {
  const ready: DistillationTrigger[] = [];
  while (session.pending.length > 0 && inputsReached(session.pending[0].until, consumed)) {
    const { trigger } = session.pending.shift()!;
    if (trigger.kind === 'SessionEnded') {
      session.endedAt = Math.max(session.endedAt ?? 0, trigger.event.timestamp);
      session.endSeenAt ??= now;
    }
    ready.push(trigger);
  }
  return ready;
}

/** What the retention decision reads of a session (small enough to keep in memory per session). */
export interface DistillerSessionProgress {
  pendingCount: number;
  lastSeenAt: number;
  endSeenAt: number | null;
  finalCloseSeen: boolean;
}

export function progressOf(session: DistillerSession): DistillerSessionProgress {
  return {
    pendingCount: session.pending.length,
    lastSeenAt: session.lastSeenAt,
    endSeenAt: session.endSeenAt,
    finalCloseSeen: session.finalCloseSeen,
  };
}

/**
 * Whether the session's state can leave the changelog: it ended and nothing waits, and either
 * the segmenter's final close came or the grace for late boundaries passed; or nothing of it
 * came for `idleMs`. Both in processing time (`now`): event times say nothing about what is still
 * on its way (a backlog of a week is read in a minute).
 */
export function sessionDone(
  progress: DistillerSessionProgress,
  now: number,
  retention: DistillerRetention = DEFAULT_DISTILLER_RETENTION,
): boolean {
  if (progress.pendingCount > 0) return false;
  if (progress.endSeenAt !== null) {
    return progress.finalCloseSeen || now - progress.endSeenAt >= retention.endGraceMs;
  }
  return now - progress.lastSeenAt >= retention.idleMs;
}
