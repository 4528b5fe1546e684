import type { Episode, Memory, WorkUnitRef } from '@engram/contracts';
import { compareText } from './ordering';
import { mayInject } from './injection-guard';

/**
 * Whose work state a session's context may show (issue #20). A work_state says where one piece
 * of work stands; shown to another session it is simply wrong ("step 2 of 4" of someone else's
 * task). So BuildContext shows a work state only when it is linked to the asking session:
 *
 * - `own`: written in that session, or in an episode of its current thread (an explicit thread,
 *   named by its channel, can span sessions);
 * - `work_unit`: written for the same unit of work (methodology and hierarchy) as an episode of
 *   the current thread;
 * - `linked_thread`: written in an episode the current thread links to (a cross-thread link).
 *
 * Nothing else — in particular not the project's latest work state.
 */
export interface WorkStateAnchor {
  sessionId: string;
  threadId: string;
  /** The current thread's episodes, of any session. */
  threadEpisodeIds: readonly string[];
  /** Episodes of other threads the current thread links to. */
  linkedEpisodeIds: readonly string[];
  /** The units of work of the current thread's episodes (each with a non-empty hierarchy). */
  workUnits: readonly WorkUnitRef[];
}

/** How a work state is linked to the anchor, strongest first. */
export type WorkStateLink = 'own' | 'work_unit' | 'linked_thread';

const LINK_ORDER: Readonly<Record<WorkStateLink, number>> = {
  own: 0,
  work_unit: 1,
  linked_thread: 2,
};

/**
 * The anchor of a session in its current thread (resolveCurrentThread's threadId and
 * linkedEpisodeIds). `episodes`: the session's episodes and the
 * current thread's episodes of other sessions (any others are ignored).
 */
export function workStateAnchor(
  sessionId: string,
  thread: { threadId: string; linkedEpisodeIds: readonly string[] },
  episodes: readonly Episode[],
): WorkStateAnchor {
  const inThread = uniqueById(episodes.filter((e) => e.threadId === thread.threadId));
  const threadEpisodeIds = inThread.map((e) => e.episodeId);
  const own = new Set(threadEpisodeIds);
  const linked = new Set(thread.linkedEpisodeIds);
  for (const episode of inThread) for (const id of episode.crossThreadEpisodeIds) linked.add(id);
  const units = new Map<string, WorkUnitRef>();
  for (const episode of inThread) {
    const unit = episode.workUnitRef;
    if (unit !== null && unit.hierarchy.length > 0) units.set(workUnitKey(unit), unit);
  }
  return {
    sessionId,
    threadId: thread.threadId,
    threadEpisodeIds,
    linkedEpisodeIds: [...linked].filter((id) => !own.has(id)).sort(compareText),
    workUnits: [...units.entries()].sort(([a], [b]) => compareText(a, b)).map(([, unit]) => unit),
  };
}

/** How `memory` is linked to the anchor, or null when it belongs to someone else's work. */
export function workStateLink(memory: Memory, anchor: WorkStateAnchor): WorkStateLink | null {
  if (
    memory.sessionId === anchor.sessionId ||
    memory.provenanceSessionIds.includes(anchor.sessionId) ||
    (memory.episodeId !== null && anchor.threadEpisodeIds.includes(memory.episodeId))
  ) {
    return 'own';
  }
  const unit = memory.workUnitRef;
  if (unit !== null && anchor.workUnits.some((u) => sameWorkUnit(u, unit))) return 'work_unit';
  if (memory.episodeId !== null && anchor.linkedEpisodeIds.includes(memory.episodeId)) {
    return 'linked_thread';
  }
  return null;
}

/**
 * The work state to show: among the non-stale work_states linked to the anchor, the most
 * strongly linked (own before work unit before a linked thread), then the most recently written
 * (record time, then creation), then by id.
 */
export function latestWorkState(
  candidates: readonly Memory[],
  anchor: WorkStateAnchor,
): Memory | undefined {
  return candidates
    .filter((m) => m.memoryType === 'work_state' && mayInject(m))
    .flatMap((memory) => {
      const link = workStateLink(memory, anchor);
      return link === null ? [] : [{ memory, rank: LINK_ORDER[link] }];
    })
    .sort(
      (a, b) =>
        a.rank - b.rank ||
        writtenAt(b.memory) - writtenAt(a.memory) ||
        compareText(a.memory.memoryId, b.memory.memoryId),
    )[0]?.memory;
}

/** Same methodology and the same hierarchy, item for item (the label is only a display name). */
export function sameWorkUnit(a: WorkUnitRef, b: WorkUnitRef): boolean {
  return (
    a.methodology === b.methodology &&
    a.hierarchy.length > 0 &&
    a.hierarchy.length === b.hierarchy.length &&
    a.hierarchy.every((item, i) => item === b.hierarchy[i])
  );
}

function workUnitKey(unit: WorkUnitRef): string {
  return JSON.stringify([unit.methodology, unit.hierarchy]);
}

function writtenAt(memory: Memory): number {
  return Math.max(memory.timestamp, memory.createdAt);
}

function uniqueById(episodes: readonly Episode[]): Episode[] {
  const byId = new Map<string, Episode>();
  for (const episode of episodes) byId.set(episode.episodeId, episode);
  return [...byId.values()].sort((a, b) => compareText(a.episodeId, b.episodeId));
}
