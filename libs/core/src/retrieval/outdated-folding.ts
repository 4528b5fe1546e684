import type { Memory } from '@engram/contracts';
import { isSuperseded } from '../memory/superseded';
import { SUPERSESSION_RULE, subjectWords, subjectWordsOverlap } from '../memory/supersession';
import { isStale } from './stale';
import { latestSuccessor, listedSuccessors } from './superseded-order';

/** Why a memory folded under another is outdated. */
export type OutdatedReason = 'superseded' | 'stale';

/** What folding reads of a result's memory. */
export type FoldableMemory = Pick<
  Memory,
  'memoryId' | 'tenantId' | 'projectId' | 'content' | 'staleAt' | 'tags' | 'relations'
>;

/** An outdated memory as a result shows it under the current one (SPEC §7's presentation). */
export interface ReplacedMemory {
  memoryId: string;
  /** Prefixed `[SUPERSEDED …]` / `[STALE …]`. */
  content: string;
  /** Times the stale penalty. */
  confidence: number;
  reason: OutdatedReason;
}

/** One result after folding: the item, and the outdated ones it replaces, best first. */
export interface FoldedResult<T> {
  item: T;
  replaces: { item: T; reason: OutdatedReason }[];
}

/**
 * Outdated memories shown under one current result, at most. The history of one fact rarely runs
 * longer; the ones beyond (the lowest ranked) are dropped from the answer, not shown as separate
 * results: they would take the slots folding frees.
 */
export const MAX_REPLACED_PER_RESULT = 3;

/**
 * An explicit search shows outdated memories (SPEC §7: penalised and prefixed, so the agent sees
 * what used to be true), but as the history of the current fact, not as results of their own:
 * otherwise the old decision takes a slot next to the decision that replaced it in nearly every
 * answer. Each outdated (stale) memory of the ranked list folds into the current memory result it
 * belongs to, when that result is in the list, ranked above it or not:
 * - a superseded one into the end of its succession chain (A by B by C: C), when that end is
 *   current; a chain running into a cycle has no end;
 * - otherwise (a file deleted; a successor not in the list or itself outdated) into the
 *   highest-ranked current memory about the same subject, by supersession's test (same tenant and
 *   project, `subjectOverlap` at `SUPERSESSION_RULE`'s thresholds).
 * An outdated memory with no such result stays a result of its own. A result with folded history
 * takes the place of its best member: the slot an outdated memory earned by matching the query
 * goes to the fact that replaced it, so its history is never pushed below the cut. Then the first
 * k results: the list must be the one before the cut, so that the folded slots are refilled.
 */
export function foldOutdated<T>(
  items: readonly T[],
  memoryOf: (item: T) => FoldableMemory | null,
  k: number,
): FoldedResult<T>[] {
  const memories = items.map(memoryOf);
  const hostOf = outdatedHosts(memories);
  const folded = new Map<number, number[]>();
  for (const [outdated, host] of hostOf) folded.set(host, [...(folded.get(host) ?? []), outdated]);
  const out: FoldedResult<T>[] = [];
  const placed = new Set<number>();
  for (let i = 0; i < items.length && out.length < Math.max(0, k); i += 1) {
    const result = hostOf.get(i) ?? i;
    if (placed.has(result)) continue;
    placed.add(result);
    const replaced = (folded.get(result) ?? []).slice(0, MAX_REPLACED_PER_RESULT);
    out.push({
      item: items[result],
      replaces: replaced.map((j) => ({
        item: items[j],
        reason: isSuperseded(memories[j]!) ? 'superseded' : 'stale',
      })),
    });
  }
  return out;
}

/** The index of the current result each foldable outdated memory folds into, in list order. */
function outdatedHosts(memories: readonly (FoldableMemory | null)[]): Map<number, number> {
  const successorOf = listedSuccessors(memories);
  const indexOf = new Map(
    memories.flatMap((m, i): [string, number][] => (m === null ? [] : [[m.memoryId, i]])),
  );
  const isCurrent = (i: number | undefined): i is number => {
    const memory = i === undefined ? null : memories[i];
    return memory !== null && !isStale(memory);
  };
  const hosts = new Map<number, number>();
  const wordsOf = subjectWordsOnce(memories);
  memories.forEach((memory, i) => {
    if (memory === null || !isStale(memory)) return;
    const end = latestSuccessor(memory.memoryId, successorOf);
    const successor = end === null || end === memory.memoryId ? undefined : indexOf.get(end);
    const host = isCurrent(successor) ? successor : sameSubjectHost(i, memories, wordsOf);
    if (host !== null) hosts.set(i, host);
  });
  return hosts;
}

function sameSubjectHost(
  outdatedIndex: number,
  memories: readonly (FoldableMemory | null)[],
  wordsOf: (index: number) => ReadonlySet<string>,
): number | null {
  const outdated = memories[outdatedIndex]!;
  const index = memories.findIndex(
    (memory, i) =>
      memory !== null &&
      !isStale(memory) &&
      memory.tenantId === outdated.tenantId &&
      memory.projectId === outdated.projectId &&
      subjectWordsOverlap(wordsOf(i), wordsOf(outdatedIndex), SUPERSESSION_RULE.minSharedWords)
        .overlap >= SUPERSESSION_RULE.minOverlap,
  );
  return index === -1 ? null : index;
}

/**
 * Each listed memory's subject words, computed on first use and kept for the fold: every stale
 * memory without a listed successor is compared with every current one, and reducing the same
 * text again for each pair made a fold of 300 results with 50 such memories take 33 ms.
 */
function subjectWordsOnce(
  memories: readonly (FoldableMemory | null)[],
): (index: number) => ReadonlySet<string> {
  const words = new Map<number, ReadonlySet<string>>();
  return (index) => {
    let found = words.get(index);
    if (found === undefined) {
      found = subjectWords(memories[index]?.content ?? '');
      words.set(index, found);
    }
    return found;
  };
}
