import { InvalidEventError } from '../errors/engram-error';
import { decideBoundary } from './boundary';
import { checkPromptContent } from './prompt-validation';
import { inactivityTimeoutMs, type SegmenterSettings } from './segmenter-settings';
import {
  addPrompt,
  closeEpisode,
  comparedEmbedding,
  implicitThreadIdOf,
  openEpisode,
  recentWindow,
} from './session-episodes';
import type {
  BoundaryReason,
  PromptDecision,
  PromptStepResult,
  SegmenterOutput,
  SegmenterPrompt,
  SessionState,
  StepContext,
  StepResult,
  ThreadState,
} from './session-segmenter-types';

export { comparedEmbedding, episodeIdOf, implicitThreadIdOf } from './session-episodes';
export type * from './session-segmenter-types';

// The types are in session-segmenter-types.ts, an episode's opening, growth and closing in
// session-episodes.ts; this module decides, prompt by prompt, where episodes and threads split.

const RECENT_EVENT_IDS = 256;

export function newSessionState(
  prompt: Pick<SegmenterPrompt, 'sessionId' | 'tenantId' | 'projectId' | 'userId'>,
): SessionState {
  return {
    sessionId: prompt.sessionId,
    tenantId: prompt.tenantId,
    projectId: prompt.projectId,
    userId: prompt.userId,
    thread: null,
    episode: null,
    lastPromptId: null,
    recentEventIds: [],
    clock: 0,
  };
}

/**
 * Applies one prompt to its session's state (SPEC §4.1–4.2), updating `state` in place (for
 * speed: callers that may have to roll back, e.g. on an aborted transaction, keep a
 * `cloneSessionState` copy). Throws InvalidEventError, before changing anything, for a prompt
 * that cannot be placed (oversize text, out-of-order promptId); a duplicate changes nothing.
 */
export function segmentPrompt(
  existing: SessionState | undefined,
  prompt: SegmenterPrompt,
  context: StepContext,
): PromptStepResult {
  const state = existing ?? newSessionState(prompt);
  // promptIds increase within a session, so only a prompt at or below the last one can be a
  // redelivery; the common path never scans the recent ids.
  const behind = state.lastPromptId !== null && prompt.promptId <= state.lastPromptId;
  if (behind && state.recentEventIds.includes(prompt.eventId)) {
    return { state, outputs: [], decision: duplicateDecision(prompt, state) };
  }
  checkPlaceable(state, prompt, context.settings);
  rememberEvent(state, prompt);
  const outputs: SegmenterOutput[] = [];
  if (prompt.source !== 'user') {
    return { state, outputs, decision: nonUserDecision(state, prompt) };
  }
  const threadChange = resolveThread(state, prompt, context.settings, outputs);
  const pending = state.thread!.pendingReason;
  state.thread!.pendingReason = null;
  let decision: PromptDecision;
  if (state.episode && threadChange === null) {
    decision = continueOrSplit(state, prompt, context, outputs);
  } else if (threadChange === null && pending) {
    openEpisode(state, prompt, context, pending, null, null, outputs);
    decision = openedDecision(state, prompt, 'limit', pending);
  } else {
    openEpisode(state, prompt, context, threadChange, null, null, outputs);
    decision = openedDecision(
      state,
      prompt,
      threadChange === null || threadChange === 'new' ? 'first' : 'thread',
      threadChange,
    );
  }
  state.thread!.lastActivityAt = prompt.timestamp;
  state.thread!.turnCount += 1;
  return { state, outputs, decision };
}

/** Closes the open episode because the session ended (SessionEnded). */
export function endSession(state: SessionState, at: number): StepResult {
  const outputs: SegmenterOutput[] = [];
  closeEpisode(state, 'session_end', null, null, Math.max(at, state.clock), outputs);
  state.thread = null;
  state.clock = Math.max(state.clock, at);
  return { state, outputs };
}

/**
 * The timer on the partition owner (SPEC §4.5): closes an episode whose implicit thread has been
 * idle past its timeout, or that has lasted longer than `maxEpisodeMs`, without waiting for the
 * session's next prompt. It emits exactly what the next prompt would have (same reason, same
 * time: the thread's last activity) and keeps the thread, so the next prompt is decided the same
 * way whether or not the timer ran first — the outputs do not depend on when the timer fires.
 */
export function closeIdle(
  state: SessionState,
  now: number,
  settings: SegmenterSettings,
): StepResult {
  const { thread, episode } = state;
  if (!thread) return { state, outputs: [] };
  const idle =
    !thread.explicit && now - thread.lastActivityAt > threadTimeout(state, thread, settings);
  const tooLong = episode !== null && now - episode.startedAt >= settings.maxEpisodeMs;
  if (!idle && !tooLong) return { state, outputs: [] };
  const outputs: SegmenterOutput[] = [];
  if (!episode) return { state, outputs };
  const reason: BoundaryReason = idle ? 'thread_inactivity' : 'time_limit';
  closeEpisode(state, reason, null, null, thread.lastActivityAt, outputs);
  if (!idle) thread.pendingReason = reason;
  return { state, outputs };
}

/** Whether a session's state can be dropped: no open episode and no thread that could resume. */
export function isIdleForever(
  state: SessionState,
  now: number,
  settings: SegmenterSettings,
): boolean {
  return state.episode === null && now - state.clock > settings.maxEpisodeMs;
}

function checkPlaceable(
  state: SessionState,
  prompt: SegmenterPrompt,
  settings: SegmenterSettings,
): void {
  // Shared with the stages that must skip what the segmenter rejects (the indexer's turns).
  checkPromptContent(prompt, settings);
  const context = {
    eventId: prompt.eventId,
    sessionId: prompt.sessionId,
    promptId: prompt.promptId,
  };
  if (state.lastPromptId !== null && prompt.promptId <= state.lastPromptId) {
    throw new InvalidEventError(
      `promptId ${prompt.promptId} is out of order: session ${prompt.sessionId} is at ${state.lastPromptId}`,
      context,
    );
  }
}

function rememberEvent(state: SessionState, prompt: SegmenterPrompt): void {
  state.recentEventIds.push(prompt.eventId);
  if (state.recentEventIds.length > RECENT_EVENT_IDS) state.recentEventIds.shift();
  state.lastPromptId = prompt.promptId;
  state.clock = Math.max(state.clock, prompt.timestamp);
  if (state.userId === null && prompt.userId !== null) state.userId = prompt.userId;
  // Agent and system turns extend the episode's prompt range; user prompts are placed later.
  if (state.episode && prompt.source !== 'user') state.episode.lastPromptId = prompt.promptId;
}

function threadTimeout(
  state: SessionState,
  thread: ThreadState,
  settings: SegmenterSettings,
): number {
  const channel = thread.channels[thread.channels.length - 1] ?? '';
  return inactivityTimeoutMs(settings, channel, state.tenantId);
}

/**
 * Puts the prompt on its thread (seed 004 §1): explicit channels follow `explicitThreadId`;
 * implicit ones open a new thread after the inactivity timeout. Returns why the previous thread
 * ended (its episode is closed), or null when the prompt continues the current thread.
 */
function resolveThread(
  state: SessionState,
  prompt: SegmenterPrompt,
  settings: SegmenterSettings,
  outputs: SegmenterOutput[],
): BoundaryReason | 'new' | null {
  const current = state.thread;
  const explicit = prompt.channelKind === 'explicit';
  const wantedId = explicit ? (prompt.explicitThreadId ?? prompt.sessionId) : null;
  let ended: BoundaryReason | null = null;
  if (current) {
    if (explicit && current.threadId !== wantedId) ended = 'explicit_thread';
    else if (!explicit && current.explicit) ended = 'explicit_thread';
    else if (!explicit) {
      const timeout = inactivityTimeoutMs(settings, prompt.channel, state.tenantId);
      if (prompt.timestamp - current.lastActivityAt > timeout) ended = 'thread_inactivity';
    }
  }
  if (current && ended === null) {
    if (!current.channels.includes(prompt.channel)) current.channels.push(prompt.channel);
    return null;
  }
  if (ended) closeEpisode(state, ended, null, null, current!.lastActivityAt, outputs);
  state.thread = {
    threadId: wantedId ?? implicitThreadIdOf(prompt.sessionId, prompt.promptId),
    explicit,
    createdAt: prompt.timestamp,
    lastActivityAt: prompt.timestamp,
    channels: [prompt.channel],
    turnCount: 0,
    pendingReason: null,
  };
  return ended ?? 'new';
}

function continueOrSplit(
  state: SessionState,
  prompt: SegmenterPrompt,
  context: StepContext,
  outputs: SegmenterOutput[],
): PromptDecision {
  const episode = state.episode!;
  const { settings } = context;
  const limit: BoundaryReason | null =
    episode.userPromptCount >= settings.maxUserPrompts
      ? 'size_limit'
      : prompt.timestamp - episode.startedAt >= settings.maxEpisodeMs
        ? 'time_limit'
        : null;
  if (limit) {
    closeEpisode(state, limit, null, null, state.thread!.lastActivityAt, outputs);
    openEpisode(state, prompt, context, limit, null, null, outputs);
    return openedDecision(state, prompt, 'limit', limit);
  }
  const embedding = context.embedding ?? null;
  const verdict = decideBoundary(
    {
      bag: episode.bag,
      centroid: comparedEmbedding(episode, settings),
      previous: episode.recentEmbeddings?.[episode.recentEmbeddings.length - 1] ?? null,
      centroidSum: episode.centroidSum,
      prompts: episode.userPromptCount,
    },
    {
      text: prompt.text,
      gapMs: prompt.timestamp - state.thread!.lastActivityAt,
      timeoutMs: threadTimeout(state, state.thread!, settings),
      embedding,
    },
    settings,
  );
  if (verdict.boundary) {
    closeEpisode(
      state,
      'intent_shift',
      verdict.similarity,
      verdict.threshold,
      state.thread!.lastActivityAt,
      outputs,
    );
    openEpisode(
      state,
      prompt,
      context,
      'intent_shift',
      verdict.similarity,
      verdict.threshold,
      outputs,
      verdict.keywords,
    );
    return openedDecision(
      state,
      prompt,
      verdict.rule,
      'intent_shift',
      verdict.similarity,
      verdict.threshold,
    );
  }
  addPrompt(
    episode,
    prompt,
    verdict.keywords,
    verdict.rule === 'terse' ? null : embedding,
    recentWindow(settings),
  );
  return {
    eventId: prompt.eventId,
    sessionId: prompt.sessionId,
    promptId: prompt.promptId,
    threadId: state.thread!.threadId,
    episodeId: episode.episodeId,
    boundary: false,
    reason: null,
    similarity: verdict.similarity,
    threshold: verdict.threshold,
    rule: verdict.rule,
  };
}

function openedDecision(
  state: SessionState,
  prompt: SegmenterPrompt,
  rule: PromptDecision['rule'],
  reason: BoundaryReason | 'new' | null,
  similarity: number | null = null,
  threshold: number | null = null,
): PromptDecision {
  return {
    eventId: prompt.eventId,
    sessionId: prompt.sessionId,
    promptId: prompt.promptId,
    threadId: state.thread!.threadId,
    episodeId: state.episode!.episodeId,
    boundary: true,
    reason: reason === 'new' || reason === null ? null : reason,
    similarity,
    threshold,
    rule,
  };
}

function nonUserDecision(state: SessionState, prompt: SegmenterPrompt): PromptDecision {
  return {
    eventId: prompt.eventId,
    sessionId: prompt.sessionId,
    promptId: prompt.promptId,
    threadId: state.thread?.threadId ?? null,
    episodeId: state.episode?.episodeId ?? null,
    boundary: false,
    reason: null,
    similarity: null,
    threshold: null,
    rule: 'not_user',
  };
}

function duplicateDecision(prompt: SegmenterPrompt, state: SessionState): PromptDecision {
  return { ...nonUserDecision(state, prompt), rule: 'duplicate' };
}

/** A deep copy (states are plain JSON), for callers that must be able to roll back. */
export function cloneSessionState(state: SessionState): SessionState {
  return structuredClone(state);
}
