import type { Memory } from '@engram/contracts';
import type { DistillationWindow } from './triggers';
import type { TriggerKind } from './types';

/**
 * Why a memory's version is chosen by a canonical order (issue #19, crash and replay runs must
 * agree). One fact is often distilled twice in a session: from the window of the episode that
 * holds it (EpisodeClosed) and from the whole session's (SessionEnded). Both versions share the
 * memory id; they differ in provenance, tags and event id. The distiller reads EpisodeClosed from
 * the segmenter's output and SessionEnded from the agent's topic, so which one it meets last
 * depends on timing — and the compacted memory topic keeps whichever was written last. Here the
 * version kept is the one from the canonically latest window (event time, then trigger kind, then
 * the trigger's event id), whatever the order the windows were distilled in.
 */

/**
 * At one event time, an episode's close comes after the session's end: the segmenter closes the
 * last episode because the session ended, and its window names the episode, which the session's
 * window, often distilled before the segmenter's boundaries arrive, cannot.
 */
const TRIGGER_RANK: Record<TriggerKind, number> = {
  CompactionPending: 0,
  SessionEnded: 1,
  EpisodeClosed: 2,
};

/** A window's place in the canonical order (compare as strings). */
export function windowOrderKey(
  window: Pick<DistillationWindow, 'triggerAt' | 'trigger' | 'triggerEventId'>,
): string {
  return [
    TRIGGER_RANK[window.trigger],
    String(window.triggerAt).padStart(16, '0'),
    window.triggerEventId,
  ].join('\u0000');
}

/**
 * The memories of a window that are to be written: those no canonically later window of the
 * session has already written. `written` (memory id → order key of the window whose version was
 * written) is updated; it lives in the session's state, so a restart remembers it.
 */
export function canonicalVersions(
  written: Record<string, string>,
  orderKey: string,
  memories: readonly Memory[],
): Memory[] {
  const kept: Memory[] = [];
  for (const memory of memories) {
    const previous = written[memory.memoryId];
    if (previous !== undefined && previous > orderKey) continue;
    written[memory.memoryId] = orderKey;
    kept.push(memory);
  }
  return kept;
}
