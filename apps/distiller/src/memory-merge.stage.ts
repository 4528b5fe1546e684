import type { Memory, Typed } from '@engram/contracts';
import { encodeStateJson, joinMemoryVersions, normaliseMemoryVersion } from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  RawStageOutput,
  StageOutput,
  TopicCodec,
} from '@engram/kafka';
import { Logger } from '@nestjs/common';
import { keepOwned, restorePartition, type PartitionRecords } from './partition-records';

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
  private readonly state: PartitionRecords<MergedRecord> = new Map();
  private owned = new Set<number>();
  private touched = new Map<string, MergedRecord>();

  readonly counters = { candidates: 0, unchanged: 0, written: 0 };
  private staged = { candidates: 0, unchanged: 0 };

  constructor(private readonly options: MemoryMergeStageOptions) {}

  readonly candidateStage: ExactlyOnceStage<Typed<'Memory'>> = {
    transform: (items) => this.run(items),
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
    keepOwned(this.state, this.owned);
  }

  /** The joined memories in committed state (tests, metrics). */
  memories(): Memory[] {
    return [...this.state.values()].flatMap((records) =>
      [...records.values()].map((r) => r.memory),
    );
  }

  private async run(items: Delivered<Typed<'Memory'>>[]): Promise<AnyStageOutput[]> {
    this.touched = new Map();
    this.staged = { candidates: items.length, unchanged: 0 };
    for (const partition of new Set(items.map((item) => item.partition))) {
      await this.ensureRestored(partition);
    }
    for (const item of items) this.join(item);
    const records = [...this.touched.values()];
    const changelog: RawStageOutput = {
      topic: this.options.changelogTopic,
      messages: records.map((record) => ({
        key: record.memory.memoryId,
        partition: record.partition,
        value: encodeStateJson(record),
      })),
    };
    return [
      {
        codec: this.options.memories,
        events: records.map((record) => ({ type: 'Memory' as const, ...record.memory })),
      } satisfies StageOutput,
      changelog,
    ];
  }

  private join(item: Delivered<Typed<'Memory'>>): void {
    const { type: _type, ...candidate } = item.event;
    const id = candidate.memoryId;
    const current = this.touched.get(id) ?? this.state.get(item.partition)?.get(id);
    const memory = current
      ? joinMemoryVersions(current.memory, candidate)
      : normaliseMemoryVersion(candidate);
    // The event id is derived from the joined state: the same id, the same memory.
    if (current && memory.eventId === current.memory.eventId) {
      this.staged.unchanged += 1;
      return;
    }
    this.touched.set(id, { v: 1, partition: item.partition, memory });
  }

  private committed(): void {
    for (const record of this.touched.values()) {
      this.state.get(record.partition)?.set(record.memory.memoryId, record);
    }
    this.counters.candidates += this.staged.candidates;
    this.counters.unchanged += this.staged.unchanged;
    this.counters.written += this.touched.size;
    this.touched = new Map();
  }

  /** The commit may or may not have happened: the changelog, restored on next use, knows. */
  private aborted(): void {
    this.state.clear();
    this.touched = new Map();
  }

  private async ensureRestored(partition: number): Promise<void> {
    this.owned.add(partition);
    const accept = (record: MergedRecord) => record.v === 1 && record.partition === partition;
    await restorePartition(this.state, partition, this.options.restore, accept, this.logger);
  }
}
