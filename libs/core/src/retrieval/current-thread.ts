import type { Episode, PromptSubmitted } from '@engram/contracts';
import type { ThreadTurn } from './context-sources';
import type { ChannelKind } from './context-types';
import { compareText } from './ordering';

/**
 * Which conversation a session is in right now, for context assembly (seed 004 §3). A user turn
 * knows its thread when its channel names one (explicitThreadId); otherwise the segmenter decided
 * it, and the episode that lists the turn's eventId says which. A turn no episode lists yet (the
 * ongoing one) belongs to the session's newest thread. Everything here is a decision over what
 * the store returned: no I/O.
 */
export interface CurrentThread {
  threadId: string;
  channel: ChannelKind;
  /** The session's user turns with their resolved thread (the assembler keeps this thread's). */
  turns: ThreadTurn[];
  /** Episode ids the current thread's episodes link to in other threads (cross-thread links). */
  linkedEpisodeIds: string[];
}

/** A channel that names no thread is implicit: the user just carries on (seed 004 §3.2). */
const DEFAULT_CHANNEL: ChannelKind = 'implicit';

export function resolveCurrentThread(
  sessionId: string,
  turns: readonly PromptSubmitted[],
  episodes: readonly Episode[],
): CurrentThread {
  const ofSession = episodes
    .filter((episode) => episode.sessionId === sessionId)
    .sort((a, b) => b.startedAt - a.startedAt || compareText(a.episodeId, b.episodeId));
  const episodeOfTurn = new Map<string, Episode>();
  // Oldest first, so a turn listed by two versions of a chain ends with the newest episode.
  for (const episode of [...ofSession].reverse()) {
    for (const eventId of episode.sourceEventIds) episodeOfTurn.set(eventId, episode);
  }
  const fallbackThread = ofSession[0]?.threadId ?? sessionId;
  const resolved = turns
    .filter((turn) => turn.sessionId === sessionId)
    .map((turn) => threadTurn(turn, episodeOfTurn.get(turn.eventId), fallbackThread))
    .sort((a, b) => b.timestamp - a.timestamp || b.promptId - a.promptId);
  const newest = turns.find((turn) => turn.eventId === resolved[0]?.eventId);
  const threadId = resolved[0]?.threadId ?? fallbackThread;
  const linked = new Set<string>();
  for (const episode of ofSession.filter((e) => e.threadId === threadId)) {
    for (const id of episode.crossThreadEpisodeIds) linked.add(id);
  }
  return {
    threadId,
    channel: newest?.channelKind ?? DEFAULT_CHANNEL,
    turns: resolved,
    linkedEpisodeIds: [...linked].sort(compareText),
  };
}

function threadTurn(
  turn: PromptSubmitted,
  episode: Episode | undefined,
  fallbackThread: string,
): ThreadTurn {
  return {
    tenantId: turn.tenantId,
    projectId: turn.projectId,
    eventId: turn.eventId,
    sessionId: turn.sessionId,
    promptId: turn.promptId,
    threadId: turn.explicitThreadId ?? episode?.threadId ?? fallbackThread,
    episodeId: episode?.episodeId ?? null,
    text: turn.text,
    timestamp: turn.timestamp,
  };
}
