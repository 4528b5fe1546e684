import type { Memory } from '@engram/contracts';
import { prunedReason } from './memory-history';
import {
  NO_PRUNE_CRITERIA,
  PRUNE_RULE,
  prunedVersion,
  selectForPruning,
  type PruneCriteria,
} from './pruning';

/**
 * The pruning the service that owns the memories runs by itself (issue #20; seed 002 §13:
 * "work_unit_outcome — prune 90 days post-merge"). The selection is pruning.ts's, the same rule
 * `engram memory prune --type work_unit_outcome --older-than 90d` applies; the writes are the
 * ones the manual prune makes: each selected memory's final version (`pruned:<reason>`, stale)
 * then its tombstone, and a memory whose pruned version was written without its tombstone (an
 * interrupted run) only gets the tombstone. A work_unit_outcome is written at the verdict that
 * closes its work unit, so its idle time on the log is the time since then ("post-merge").
 * Pure: the same memories and clock give the same writes (the versions' event ids derive from
 * the versions they replace), and a memory once tombstoned is no longer among the input.
 */

export interface ScheduledPrunes {
  /** Final versions to write, in memory-id order. */
  versions: Memory[];
  /** Memory ids to tombstone after them (the versions' and the interrupted runs'). */
  tombstones: string[];
}

/** The criteria of the scheduled work_unit_outcome prune. */
export function workUnitOutcomePruneCriteria(retentionDays: number): PruneCriteria {
  return { ...NO_PRUNE_CRITERIA, types: ['work_unit_outcome'], olderThanDays: retentionDays };
}

/**
 * The writes of one scheduled run over the latest versions of the memories: nothing when
 * `retentionDays` is 0 (disabled).
 */
export function scheduledWorkUnitOutcomePrunes(
  memories: readonly Memory[],
  retentionDays: number,
  now: number,
): ScheduledPrunes {
  if (!(retentionDays > 0)) return { versions: [], tombstones: [] };
  const outcomes = memories.filter((memory) => memory.memoryType === 'work_unit_outcome');
  const unfinished = outcomes
    .filter((memory) => prunedReason(memory) !== null)
    .map((memory) => memory.memoryId)
    .sort();
  const criteria = workUnitOutcomePruneCriteria(retentionDays);
  const versions = selectForPruning(outcomes, criteria, PRUNE_RULE, now).map(({ memory, reason }) =>
    prunedVersion(memory, reason, now),
  );
  return { versions, tombstones: [...unfinished, ...versions.map((v) => v.memoryId)] };
}
