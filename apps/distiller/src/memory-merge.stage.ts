import type { Memory, Typed } from '@engram/contracts';
import { joinMemoryVersions, KeyedChangelogState, normaliseMemoryVersion } from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  StageOutput,
  TopicCodec,
} from '@engram/core';
import { Logger } from '@nestjs/common';

export interface MemoryMergeStageOptions {
  /** Compacted, partitioned like the candidates topic: one joined memory per memory id. */
  changelogTopic: string;
  memories: TopicCodec<Typed<'Memory'>>;
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
}

/** One memory's changelog record (key memoryId). */
interface MergedRecord {
  v: 1;
  partition: number;
  memory: Memory;
}

/**
 * The distiller's fact memories, joined per memory id (issue #19). The distillation stage writes
 * each distillation's version of a fact to the internal candidates topic, keyed by memory id; this
 * stage owns that key, joins every version into the memory's state (joinMemoryVersions: the same
 * result for any order, replay or redelivery) and writes the joined memory to memory.memories.v1
 * only when it changed — in the transaction that commits the candidate's offset and the state's
 * changelog record. So the memory topic's final state no longer depends on which session the
 * distiller finished last, and a fact seen in several sessions names all of them.
 */
export class MemoryMergeStage {
  private readonly logger = new Logger('MemoryMerge');
  private readonly state: KeyedChangelogState<MergedRecord>;

  readonly counters = { candidates: 0, unchanged: 0, written: 0 };
  private staged = { candidates: 0, unchanged: 0 };

  constructor(private readonly options: MemoryMergeStageOptions) {
    this.state = new KeyedChangelogState({
      changelogTopic: options.changelogTopic,
      restore: options.restore,
      accepts: (record) => record.v === 1,
      onUnreadable: (key, error) =>
        this.logger.error(`unreadable changelog record ${key} skipped: ${String(error)}`),
    });
  }

  readonly candidateStage: ExactlyOnceStage<Typed<'Memory'>> = {
    transform: (items) => this.run(items),
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.state.onAssignment(partitions);
  }

  /** The joined memories in committed state (tests, metrics). */
  memories(): Memory[] {
    return this.state.records().map((record) => record.memory);
  }

  private async run(items: Delivered<Typed<'Memory'>>[]): Promise<AnyStageOutput[]> {
    this.state.begin();
    this.staged = { candidates: items.length, unchanged: 0 };
    await this.state.restore(new Set(items.map((item) => item.partition)));
    for (const item of items) this.join(item);
    return [
      {
        codec: this.options.memories,
        events: [...this.state.touched.values()].map((record) => ({
          type: 'Memory' as const,
          ...record.memory,
        })),
      } satisfies StageOutput,
      this.state.changelog(),
    ];
  }

  private join(item: Delivered<Typed<'Memory'>>): void {
    const { type: _type, ...candidate } = item.event;
    const id = candidate.memoryId;
    const current = this.state.current(item.partition, id);
    const memory = current
      ? joinMemoryVersions(current.memory, candidate)
      : normaliseMemoryVersion(candidate);
    // The event id is derived from the joined state: the same id, the same memory.
    if (current && memory.eventId === current.memory.eventId) {
      this.staged.unchanged += 1;
      return;
    }
    this.state.stage(id, { v: 1, partition: item.partition, memory });
  }

  private committed(): void {
    this.counters.candidates += this.staged.candidates;
    this.counters.unchanged += this.staged.unchanged;
    this.counters.written += this.state.touched.size;
    this.state.commit();
  }

  private aborted(): void {
    this.state.abort();
  }
}
