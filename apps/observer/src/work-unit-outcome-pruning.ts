import type { Typed } from '@engram/contracts';
import {
  partitionOfKey,
  scheduledWorkUnitOutcomePrunes,
  type AnyStageOutput,
  type MemoriesOfType,
  type SweepingStage,
  type TopicCodec,
} from '@engram/core';
import { projectKeyOf } from './project-work';

export interface WorkUnitOutcomePruningOptions {
  /** ObserverSettings.workUnitOutcomeRetentionDays (0: the timer prunes nothing). */
  retentionDays: number;
  memories: TopicCodec<Typed<'Memory'>>;
  /** The latest versions on the compacted memory topic (the view the promotion stage reads). */
  lookup: MemoriesOfType;
  /** How many partitions projectWork has (a project's partition decides who prunes it). */
  partitionCount: () => Promise<number>;
  /** Injected in tests; the wall clock otherwise. */
  clock?: () => number;
}

/**
 * The observer's scheduled work_unit_outcome prune (issue #20), a timer of its topology: the core
 * decides which memories go and writes what (`scheduledWorkUnitOutcomePrunes`, the manual
 * prune's rule and records), this stage reads the memory topic and publishes the final versions
 * then the tombstones, in the timer's own transaction. Each member prunes the projects whose
 * projectWork partition it owns, so two observers never write the same prune; a run that
 * aborted leaves nothing and the next tick does it again, and a committed one leaves nothing to
 * do (the tombstoned memories are gone from the view). Holds no state of its own.
 */
export class WorkUnitOutcomePruning implements SweepingStage {
  private owned: ReadonlySet<number> = new Set();
  private partitions: number | null = null;
  private staged = 0;
  /** `pruned` counts memories tombstoned by committed runs. */
  readonly counters = { runs: 0, pruned: 0 };

  constructor(private readonly options: WorkUnitOutcomePruningOptions) {}

  /** This member's projectWork partitions. */
  onAssignment(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
  }

  async sweep(): Promise<AnyStageOutput[]> {
    this.staged = 0;
    const { retentionDays, memories, lookup } = this.options;
    if (!(retentionDays > 0) || this.owned.size === 0) return [];
    this.partitions ??= await this.options.partitionCount();
    const count = this.partitions;
    const ours = (await lookup.memoriesOfType('work_unit_outcome')).filter((memory) =>
      this.owned.has(partitionOfKey(projectKeyOf(memory), count)),
    );
    const now = (this.options.clock ?? Date.now)();
    const { versions, tombstones } = scheduledWorkUnitOutcomePrunes(ours, retentionDays, now);
    this.counters.runs += 1;
    if (tombstones.length === 0) return [];
    this.staged = tombstones.length;
    // The final versions first, then the tombstones: one key, one partition, in this order.
    return [
      {
        codec: memories,
        events: versions.map((memory) => ({ type: 'Memory' as const, ...memory })),
      },
      { topic: memories.topic, messages: tombstones.map((key) => ({ key, value: null })) },
    ];
  }

  committed(): void {
    this.counters.pruned += this.staged;
    this.staged = 0;
  }

  aborted(): void {
    this.staged = 0;
  }
}
