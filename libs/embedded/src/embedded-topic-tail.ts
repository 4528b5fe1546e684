import { MisconfigurationError, type Delivered, type TailSpec, type TopicTail } from '@engram/core';
import { Logger } from '@nestjs/common';
import { decodeEvent } from './json-event-codec';
import { PollSleep } from './poll-sleep';
import type { LogRecord } from './sqlite-event-log-records';
import type { SqliteEventLog } from './sqlite-event-log';

export interface EmbeddedTailOptions {
  maxBatchRecords?: number;
  /** The pause between reads when nothing is new (an append in this process cuts it short). */
  pollIntervalMs?: number;
}

/**
 * The embedded StreamPlatform's tail: one poll loop over every partition of the topic, from the
 * first record stamped at or after the spec's timestamp, its positions in memory only (nothing
 * is committed: a restarted tail starts from its timestamp again). Appends by other processes
 * sharing the file are seen at the next poll.
 */
export class EmbeddedTopicTail<E> implements TopicTail {
  private readonly logger = new Logger(EmbeddedTopicTail.name);
  private readonly pause = new PollSleep();
  private positions: number[] = [];
  private loop?: Promise<void>;
  private running = false;
  private stopWatch?: () => void;
  readonly counters = { handled: 0, skipped: 0 };

  constructor(
    private readonly log: SqliteEventLog,
    private readonly spec: TailSpec<E>,
    private readonly options: EmbeddedTailOptions = {},
  ) {}

  start(): Promise<void> {
    const topic = this.spec.codec.topic;
    if (!this.log.topic(topic)) {
      return Promise.reject(new MisconfigurationError(`cannot tail ${topic}: it does not exist`));
    }
    this.positions = this.log.offsetsAtTime(topic, this.spec.fromTimestamp);
    this.running = true;
    this.stopWatch = this.log.onAppend((appended) => {
      if (appended === topic) this.pause.wakeAll();
    });
    this.loop = this.pollLoop();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopWatch?.();
    this.pause.wakeAll();
    await this.loop;
  }

  private async pollLoop(): Promise<void> {
    const topic = this.spec.codec.topic;
    while (this.running) {
      let busy = false;
      for (let partition = 0; partition < this.positions.length && this.running; partition++) {
        try {
          busy = (await this.pollPartition(partition)) || busy;
        } catch (error) {
          // The log itself failed: the same records are read again after the pause.
          this.logger.error(`${topic}[${partition}]: ${String(error)}`);
        }
      }
      if (!busy && this.running) await this.pause.sleep(this.options.pollIntervalMs ?? 100);
    }
  }

  private async pollPartition(partition: number): Promise<boolean> {
    const topic = this.spec.codec.topic;
    const records = this.log.read(
      topic,
      partition,
      this.positions[partition],
      this.options.maxBatchRecords ?? 500,
    );
    if (records.length === 0) return false;
    const items: Delivered<E>[] = [];
    for (const record of records) {
      if (record.value === null) continue; // a tombstone: no event
      try {
        items.push(decodeEvent(this.spec.codec, record));
      } catch (error) {
        this.skip(record, error);
      }
    }
    if (items.length > 0) {
      try {
        await this.spec.handle(items);
        this.counters.handled += items.length;
      } catch (error) {
        for (const item of items) this.skip({ ...item, offset: Number(item.offset) }, error);
      }
    }
    this.positions[partition] = records[records.length - 1].offset + 1;
    return true;
  }

  private skip(record: Pick<LogRecord, 'topic' | 'partition' | 'offset'>, error: unknown): void {
    this.counters.skipped += 1;
    const { topic, partition, offset } = record;
    this.spec.onSkipped({ topic, partition, offset: String(offset), error });
  }
}
