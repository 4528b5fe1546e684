import { ENGRAM_ID_NAMESPACE } from '../ids/deterministic-id';
import { uuidV5Of } from '../ids/sha1-uuid-v5';
import { InvalidEventError } from '../errors/engram-error';
import { decideBoundary, type BoundaryRule } from './boundary';
import { intentKeywords } from './intent-keywords';
import { checkPromptContent } from './prompt-validation';
import { inactivityTimeoutMs, type SegmenterSettings } from './segmenter-settings';

/** Why an episode closed (SPEC §3 `reason`). */
export type BoundaryReason =
  | 'intent_shift'
  | 'thread_inactivity'
  | 'explicit_thread'
  | 'session_end'
  | 'size_limit'
  | 'time_limit';

/** The fields of a PromptSubmitted the segmenter reads (the contract type satisfies it). */
export interface SegmenterPrompt {
  eventId: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  agentId: string;
  userId: string | null;
  timestamp: number;
  promptId: number;
  source: 'user' | 'agent' | 'system';
  channel: string;
  channelKind: 'explicit' | 'implicit';
  explicitThreadId: string | null;
  text: string;
  parentEpisodeId: string | null;
}

export interface OpenEpisode {
  episodeId: string;
  threadId: string;
  firstPromptId: number;
  lastPromptId: number;
  startedAt: number;
  lastActivityAt: number;
  /** The accumulated intent keywords (seed 000's episode bag). */
  bag: string[];
  /** Sum of the prompt embeddings (hybrid mode) and how many were added. */
  centroidSum: number[] | null;
  centroidCount: number;
  /**
   * The last `hybridWindow` prompt embeddings, oldest first (hybrid mode with a window; absent in
   * states written before the window existed, which then compare with the whole centroid).
   */
  recentEmbeddings?: number[][];
  userPromptCount: number;
  /** The first non-terse user prompt: the episode's stated intent. */
  intent: string | null;
  parentEpisodeId: string | null;
  /** eventIds of the user prompts (provenance). */
  sourceEventIds: string[];
  openedBy: BoundaryReason | null;
}

export interface ThreadState {
  threadId: string;
  explicit: boolean;
  createdAt: number;
  lastActivityAt: number;
  channels: string[];
  turnCount: number;
  /**
   * Set when the timer closed the thread's episode (time limit) between prompts: the next prompt
   * opens its episode with this reason, exactly as if it had found the limit itself.
   */
  pendingReason: BoundaryReason | null;
}

/** Everything the segmenter keeps per session; plain JSON (it lives in a compacted changelog). */
export interface SessionState {
  sessionId: string;
  tenantId: string;
  projectId: string;
  userId: string | null;
  thread: ThreadState | null;
  episode: OpenEpisode | null;
  lastPromptId: number | null;
  /** Recent eventIds, newest last: a redelivered event changes nothing. */
  recentEventIds: string[];
  /** Latest event time seen (the session's clock). */
  clock: number;
}

/** A closed or opened episode as the service publishes it. */
export interface EpisodeSnapshot {
  episodeId: string;
  threadId: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  userId: string | null;
  firstPromptId: number;
  lastPromptId: number;
  startedAt: number;
  endedAt: number | null;
  intentKeywords: string[];
  intent: string | null;
  userPromptCount: number;
  parentEpisodeId: string | null;
  sourceEventIds: string[];
}

export type SegmenterOutput =
  | {
      kind: 'opened';
      at: number;
      episode: EpisodeSnapshot;
      reason: BoundaryReason | null;
      similarity: number | null;
      threshold: number | null;
    }
  | {
      kind: 'closed';
      at: number;
      episode: EpisodeSnapshot;
      reason: BoundaryReason;
      similarity: number | null;
      threshold: number | null;
    };

/** One line of `engram segment` (SPEC §12), plus the rule and threshold that decided. */
export interface PromptDecision {
  eventId: string;
  sessionId: string;
  promptId: number;
  threadId: string | null;
  episodeId: string | null;
  boundary: boolean;
  reason: BoundaryReason | null;
  similarity: number | null;
  threshold: number | null;
  rule: BoundaryRule | 'duplicate' | 'not_user' | 'first' | 'limit' | 'thread';
}

export interface StepResult {
  state: SessionState;
  outputs: SegmenterOutput[];
}

export interface PromptStepResult extends StepResult {
  decision: PromptDecision;
}

/** Picks the parent of a new episode (seed 003 chaining); absent → only explicit parents. */
export type ParentFinder = (opening: {
  projectId: string;
  keywords: readonly string[];
  embedding: readonly number[] | null;
  at: number;
  excludeEpisodeId: string;
}) => string | null;

export interface StepContext {
  settings: SegmenterSettings;
  /** The prompt's embedding (hybrid mode; computed by the caller, so the core stays pure). */
  embedding?: readonly number[] | null;
  findParent?: ParentFinder;
}

const RECENT_EVENT_IDS = 256;

/**
 * `uuidV5` of deterministic-id.ts, with the SHA-1 in JavaScript: the native hash call behind one
 * id per episode cost a third of the segmenter's time (see sha1-uuid-v5.ts).
 */
const engramUuidV5 = uuidV5Of(ENGRAM_ID_NAMESPACE);

export function episodeIdOf(sessionId: string, firstPromptId: number): string {
  return engramUuidV5(`${sessionId}:${firstPromptId}`);
}

export function implicitThreadIdOf(sessionId: string, firstPromptId: number): string {
  return engramUuidV5(`${sessionId}:thread:${firstPromptId}`);
}

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

/**
 * What a prompt's embedding is compared with: the sum of the episode's last `hybridWindow`
 * embeddings (the direction of their mean; cosine ignores the length) or of all of them.
 */
export function comparedEmbedding(
  episode: Pick<OpenEpisode, 'centroidSum' | 'recentEmbeddings'>,
  settings: Pick<SegmenterSettings, 'hybridWindow'>,
): readonly number[] | null {
  const recent = episode.recentEmbeddings;
  if (settings.hybridWindow <= 0 || !recent || recent.length === 0) return episode.centroidSum;
  const window = recent.slice(-settings.hybridWindow);
  if (window.length === 1) return window[0];
  const sum = new Array<number>(window[0].length).fill(0);
  for (const vector of window) for (let i = 0; i < sum.length; i += 1) sum[i] += vector[i] ?? 0;
  return sum;
}

/** How many recent embeddings an episode keeps: only hybrid mode compares with them. */
function recentWindow(settings: SegmenterSettings): number {
  return settings.mode === 'hybrid' ? settings.hybridWindow : 0;
}

function addPrompt(
  episode: OpenEpisode,
  prompt: SegmenterPrompt,
  keywords: readonly string[],
  embedding: readonly number[] | null,
  window: number,
): void {
  episode.userPromptCount += 1;
  episode.lastPromptId = prompt.promptId;
  episode.lastActivityAt = prompt.timestamp;
  episode.sourceEventIds.push(prompt.eventId);
  if (keywords.length > 0) {
    for (const keyword of keywords) if (!episode.bag.includes(keyword)) episode.bag.push(keyword);
    if (episode.intent === null) episode.intent = prompt.text;
  }
  if (embedding) {
    episode.centroidSum = episode.centroidSum
      ? episode.centroidSum.map((value, i) => value + (embedding[i] ?? 0))
      : [...embedding];
    episode.centroidCount += 1;
    if (window > 0) {
      const recent = episode.recentEmbeddings ?? [];
      recent.push([...embedding]);
      if (recent.length > window) recent.splice(0, recent.length - window);
      episode.recentEmbeddings = recent;
    }
  }
}

function openEpisode(
  state: SessionState,
  prompt: SegmenterPrompt,
  context: StepContext,
  reason: BoundaryReason | 'new' | null,
  similarity: number | null,
  threshold: number | null,
  outputs: SegmenterOutput[],
  keywords: readonly string[] = intentKeywords(prompt.text),
): void {
  const episodeId = episodeIdOf(prompt.sessionId, prompt.promptId);
  const embedding = context.embedding ?? null;
  const parentEpisodeId =
    prompt.parentEpisodeId ??
    context.findParent?.({
      projectId: prompt.projectId,
      keywords,
      embedding,
      at: prompt.timestamp,
      excludeEpisodeId: episodeId,
    }) ??
    null;
  const episode: OpenEpisode = {
    episodeId,
    threadId: state.thread!.threadId,
    firstPromptId: prompt.promptId,
    lastPromptId: prompt.promptId,
    startedAt: prompt.timestamp,
    lastActivityAt: prompt.timestamp,
    // intentKeywords() has no repeats, so this is the bag addPrompt() would build from [].
    bag: keywords.slice(),
    centroidSum: embedding ? [...embedding] : null,
    centroidCount: embedding ? 1 : 0,
    ...(embedding && recentWindow(context.settings) > 0 && { recentEmbeddings: [[...embedding]] }),
    userPromptCount: 1,
    intent: keywords.length > 0 ? prompt.text : null,
    parentEpisodeId,
    // Built at their size (not grown from []): an episode is kept for as long as it is open.
    sourceEventIds: [prompt.eventId],
    openedBy: reason === 'new' ? null : reason,
  };
  state.episode = episode;
  outputs.push({
    kind: 'opened',
    at: prompt.timestamp,
    episode: snapshot(state, episode, null),
    reason: episode.openedBy,
    similarity,
    threshold,
  });
}

function closeEpisode(
  state: SessionState,
  reason: BoundaryReason,
  similarity: number | null,
  threshold: number | null,
  at: number,
  outputs: SegmenterOutput[],
): void {
  const episode = state.episode;
  if (!episode) return;
  const endedAt = Math.max(episode.lastActivityAt, Math.min(at, state.clock));
  outputs.push({
    kind: 'closed',
    at: endedAt,
    // The episode leaves the state here, never to change again: its snapshot takes its arrays.
    episode: snapshot(state, episode, endedAt, false),
    reason,
    similarity,
    threshold,
  });
  state.episode = null;
}

function snapshot(
  state: SessionState,
  episode: OpenEpisode,
  endedAt: number | null,
  copyArrays = true,
): EpisodeSnapshot {
  return {
    episodeId: episode.episodeId,
    threadId: episode.threadId,
    tenantId: state.tenantId,
    projectId: state.projectId,
    sessionId: state.sessionId,
    userId: state.userId,
    firstPromptId: episode.firstPromptId,
    lastPromptId: episode.lastPromptId,
    startedAt: episode.startedAt,
    endedAt,
    intentKeywords: copyArrays ? episode.bag.slice() : episode.bag,
    intent: episode.intent,
    userPromptCount: episode.userPromptCount,
    parentEpisodeId: episode.parentEpisodeId,
    sourceEventIds: copyArrays ? episode.sourceEventIds.slice() : episode.sourceEventIds,
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
