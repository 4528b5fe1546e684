import { isLoggedTombstone, type EventLogPort } from './event-log.port';
import type { TopicCodec } from './stream-stage';

/**
 * The latest event per key of a compacted topic (memory.proposals.v1, memory.memories.v1,
 * memory.thread-links.v1), on
 * any event log, read incrementally: each refresh reads only what was appended since the last.
 * A tombstone deletes its key (a memory deleted through Feedback leaves the view).
 */
export class CompactedView<E> {
  private readonly latest = new Map<string, E>();
  private readonly readUpTo: number[] = [];

  /**
   * `pageSize`: records per read. On Kafka each read costs a consumer-group join (seconds), so
   * large pages keep a full read of a big topic to a few reads.
   */
  constructor(
    private readonly log: EventLogPort,
    private readonly codec: TopicCodec<E>,
    private readonly pageSize = 10_000,
  ) {}

  get(key: string): E | undefined {
    return this.latest.get(key);
  }

  values(): E[] {
    return [...this.latest.values()];
  }

  /** Reads what was appended since the last refresh. */
  async refresh(): Promise<this> {
    const ends = await this.log.endOffsets(this.codec.topic);
    for (let partition = 0; partition < ends.length; partition += 1) {
      let from = this.readUpTo[partition] ?? 0;
      while (from < ends[partition]) {
        const page = await this.log.read(this.codec, partition, from, this.pageSize, {
          tombstones: true,
        });
        for (const record of page) {
          if (isLoggedTombstone(record)) this.latest.delete(record.key);
          else this.latest.set(this.codec.key(record.event), record.event);
        }
        if (page.length > 0) from = page[page.length - 1].offset + 1;
        // A short page read to the end; on Kafka the offsets left are transaction markers.
        if (page.length < this.pageSize) from = Math.max(from, ends[partition]);
      }
      this.readUpTo[partition] = from;
    }
    return this;
  }
}
