import { ENGRAM_ID_NAMESPACE } from '../ids/deterministic-id';
import { uuidV5Of } from '../ids/sha1-uuid-v5';
import { intentKeywords } from './intent-keywords';
import type { SegmenterSettings } from './segmenter-settings';
import type {
  BoundaryReason,
  EpisodeSnapshot,
  OpenEpisode,
  SegmenterOutput,
  SegmenterPrompt,
  SessionState,
  StepContext,
} from './session-segmenter-types';

// An episode of a session (session-segmenter.ts decides when): its ids, opening, growing with
// each prompt, closing, and its snapshot as the service publishes it.

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
export function recentWindow(settings: SegmenterSettings): number {
  return settings.mode === 'hybrid' ? settings.hybridWindow : 0;
}

export function addPrompt(
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

export function openEpisode(
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

export function closeEpisode(
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
