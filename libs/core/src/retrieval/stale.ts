import type { Memory } from '@engram/contracts';
import { isSuperseded, SUPERSEDED_PREFIX } from '../memory/superseded';
import type { StaleConfig } from './ranking-config';

/**
 * A memory is stale once staleAt is set: a file it refers to was deleted, or the graph saw its
 * subject restructured (seed 002 §7 "File Staleness Detection"). Staleness is never undone by
 * time passing — only a rewrite (rename handling, re-validation) clears staleAt.
 */
export function isStale(memory: Pick<Memory, 'staleAt'>): boolean {
  return memory.staleAt !== null && memory.staleAt !== undefined;
}

/** What an explicit search shows of a memory: penalised and labelled when stale. */
export interface PresentedMemory {
  stale: boolean;
  content: string;
  /** The stored confidence, times the stale penalty when stale. */
  confidence: number;
}

/**
 * Stale memories stay findable by an explicit search (the agent asked), but with a confidence
 * penalty and the `[STALE — file no longer exists]` prefix, so nobody acts on them unawares; a
 * superseded one (stale because a newer memory replaced it) with the `[SUPERSEDED …]` prefix.
 */
export function presentMemory(
  memory: Pick<Memory, 'staleAt' | 'content' | 'confidence'> & Partial<Pick<Memory, 'tags'>>,
  stale: StaleConfig,
): PresentedMemory {
  if (!isStale(memory)) {
    return { stale: false, content: memory.content, confidence: memory.confidence };
  }
  return {
    stale: true,
    content: `${isSuperseded(memory) ? SUPERSEDED_PREFIX : stale.prefix} ${memory.content}`,
    confidence: memory.confidence * stale.penalty,
  };
}
