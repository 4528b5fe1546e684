import {
  backoffDelayMs,
  deadLetterHeaders,
  deadLetterTopic,
  errorMessage,
  MisconfigurationError,
  retryUntilSettled,
  type Delivered,
  type DeliveredOrTombstone,
  type SinkConsumer,
  type SinkConsumerSpec,
  type TopicCodec,
} from '@engram/core';
import { processMetrics } from '@engram/metrics';
import { Logger } from '@nestjs/common';
import { watchEmbeddedConsumer } from './consumer-metrics';
import { decodeEvent } from './json-event-codec';
import type { AppendRecord, LogRecord } from './sqlite-event-log-records';
import type { SqliteEventLog } from './sqlite-event-log';
import { PollSleep } from './poll-sleep';

interface SinkRoute {
  codec: TopicCodec<unknown>;
  handle: (items: DeliveredOrTombstone<unknown>[]) => Promise<void>;
  tombstones: boolean;
}

/** A record the sink could not take, and why. */
interface SinkDeadLetter {
  record: LogRecord;
  error: unknown;
}

export interface EmbeddedSinkOptions extends SinkConsumerSpec {
  maxBatchRecords?: number;
  pollIntervalMs?: number;
}

/**
 * The embedded twin of libs/kafka's ReliableConsumer, for a sink outside the log (the retrieval
 * store): read a partition's batch after the group's offset, hand it to the handler, and commit
 * the offset only after the handler returned — at-least-once, the writes being idempotent
 * upserts by id. EmbeddedExactlyOnceProcessor is not used because it dead-letters tombstones,
 * and on the compacted memory and episode topics a tombstone is a deletion. Retriable failures
 * back off and retry the batch; a batch that fails for good is retried record by record and
 * the failing record dead-lettered with its reason (SPEC §11), never skipped silently.
 */
export class EmbeddedSinkConsumer implements SinkConsumer {
  private readonly logger = new Logger(EmbeddedSinkConsumer.name);
  private readonly routes = new Map<string, SinkRoute>();
  private readonly positions = new Map<string, number[]>();
  private readonly pause = new PollSleep();
  private loops: Promise<void>[] = [];
  private running = false;
  private stopWatch?: () => void;
  private stopMetrics?: () => void;
  readonly counters = { processed: 0, deadLettered: 0, retries: 0 };

  constructor(
    private readonly log: SqliteEventLog,
    private readonly options: EmbeddedSinkOptions,
  ) {}

  /** `tombstones`: a null value deletes its key (compacted topics); elsewhere it is poison. */
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: (items: Delivered<E>[]) => Promise<void>,
    options?: { tombstones?: false },
  ): this;
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: (items: DeliveredOrTombstone<E>[]) => Promise<void>,
    options: { tombstones: true },
  ): this;
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: (items: DeliveredOrTombstone<E>[]) => Promise<void>,
    options: { tombstones?: boolean } = {},
  ): this {
    const tombstones = options.tombstones ?? false;
    this.routes.set(codec.topic, { codec, handle, tombstones } as unknown as SinkRoute);
    return this;
  }

  /** Starts one poll loop per subscribed topic; the topics must exist (their DLQs are created). */
  start(): Promise<void> {
    for (const topic of this.routes.keys()) {
      const info = this.log.topic(topic);
      if (!info) throw new MisconfigurationError(`cannot consume ${topic}: it does not exist`);
      if (!this.log.topic(deadLetterTopic(topic))) this.log.ensureTopic(deadLetterTopic(topic), 1);
      const committed = this.log.committedOffsets(this.options.groupId, topic);
      const ends = this.options.fromBeginning === false ? this.log.endOffsets(topic) : [];
      this.positions.set(
        topic,
        Array.from({ length: info.partitions }, (_, p) => committed.get(p) ?? ends[p] ?? 0),
      );
    }
    this.running = true;
    this.stopWatch = this.log.onAppend((topic) => {
      if (this.routes.has(topic)) this.wakeUp();
    });
    const { groupId } = this.options;
    this.stopMetrics = watchEmbeddedConsumer(this.log, groupId, this.positions, () => this.running);
    this.loops = [...this.routes.values()].map((route) => this.pollLoop(route));
    return Promise.resolve();
  }

  /** Stops polling; the batch in hand finishes (and commits) first. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopWatch?.();
    this.stopMetrics?.();
    this.wakeUp();
    await Promise.all(this.loops);
  }

  private async pollLoop(route: SinkRoute): Promise<void> {
    const positions = this.positions.get(route.codec.topic)!;
    let failures = 0;
    while (this.running) {
      let busy = false;
      for (let partition = 0; partition < positions.length && this.running; partition += 1) {
        try {
          busy = (await this.pollPartition(route, partition, positions)) || busy;
          failures = 0;
        } catch (error) {
          // The log itself failed (nothing was committed): read the same records after a pause.
          const delay = backoffDelayMs(failures++, this.options.retry);
          this.logger.error(`${route.codec.topic}[${partition}]: ${errorMessage(error)}`);
          await this.idle(delay);
        }
      }
      if (!busy) await this.idle(this.options.pollIntervalMs ?? 100);
    }
  }

  private async pollPartition(
    route: SinkRoute,
    partition: number,
    positions: number[],
  ): Promise<boolean> {
    const records = this.log.read(
      route.codec.topic,
      partition,
      positions[partition],
      this.options.maxBatchRecords ?? 500,
    );
    if (records.length === 0) return false;
    const batchDone = processMetrics().startBatch(this.options.groupId, route.codec.topic);
    try {
      return await this.processBatch(route, partition, positions, records);
    } finally {
      batchDone();
    }
  }

  private async processBatch(
    route: SinkRoute,
    partition: number,
    positions: number[],
    records: LogRecord[],
  ): Promise<boolean> {
    const letters: SinkDeadLetter[] = [];
    const items: { record: LogRecord; item: DeliveredOrTombstone<unknown> }[] = [];
    for (const record of records) {
      try {
        items.push({ record, item: delivered(route, record) });
      } catch (error) {
        letters.push({ record, error });
      }
    }
    const settled = await this.handle(route, items, letters);
    if (!settled) return false; // stopping: nothing committed, the batch comes again
    const next = records[records.length - 1].offset + 1;
    const topic = route.codec.topic;
    this.log.transaction(() => {
      if (letters.length > 0) {
        this.log.append(
          deadLetterTopic(topic),
          letters.map((letter) => this.deadLetter(letter)),
        );
      }
      this.log.commitOffsets(this.options.groupId, topic, new Map([[partition, next]]));
    });
    positions[partition] = next;
    this.recordCommitted(topic, items.length, letters);
    return true;
  }

  private recordCommitted(topic: string, processed: number, letters: SinkDeadLetter[]): void {
    this.counters.processed += processed;
    this.counters.deadLettered += letters.length;
    const metrics = processMetrics();
    metrics.recordConsumed(this.options.groupId, topic, processed);
    for (const { error } of letters) metrics.recordDeadLetter(this.options.groupId, topic, error);
  }

  /** The batch, else record by record; failing records join `letters`. False: stopped. */
  private async handle(
    route: SinkRoute,
    items: { record: LogRecord; item: DeliveredOrTombstone<unknown> }[],
    letters: SinkDeadLetter[],
  ): Promise<boolean> {
    if (items.length === 0) return true;
    const whole = await this.retry(route, items);
    if (whole.kind !== 'dead-letter') return whole.kind === 'done';
    for (const one of items) {
      const single = await this.retry(route, [one]);
      if (single.kind === 'stopped') return false;
      if (single.kind === 'dead-letter') letters.push({ record: one.record, error: single.error });
    }
    return true;
  }

  private retry(route: SinkRoute, items: { item: DeliveredOrTombstone<unknown> }[]) {
    const topic = route.codec.topic;
    return retryUntilSettled(
      () => route.handle(items.map(({ item }) => item)),
      {
        shouldContinue: () => this.running,
        heartbeat: () => Promise.resolve(),
        onRetry: (error, attempt, delayMs) => {
          this.counters.retries += 1;
          this.logger.warn(
            `${topic}: retry ${attempt + 1} in ${delayMs} ms: ${errorMessage(error)}`,
          );
        },
      },
      this.options.retry,
      5,
    );
  }

  private deadLetter({ record, error }: SinkDeadLetter): AppendRecord {
    const source = {
      topic: record.topic,
      partition: record.partition,
      offset: String(record.offset),
    };
    return {
      key: record.key,
      value: record.value,
      headers: deadLetterHeaders(error, source, this.options.service, new Date()),
    };
  }

  private idle(ms: number): Promise<void> {
    return this.running ? this.pause.sleep(ms) : Promise.resolve();
  }

  private wakeUp(): void {
    this.pause.wakeAll();
  }
}

/** A record as the handler sees it: a decoded event, or (on compacted topics) a deletion. */
function delivered(route: SinkRoute, record: LogRecord): DeliveredOrTombstone<unknown> {
  if (record.value !== null || !route.tombstones) return decodeEvent(route.codec, record);
  if (!record.key) {
    throw new MisconfigurationError(`tombstone at offset ${record.offset} has no key`);
  }
  return {
    event: null,
    topic: record.topic,
    partition: record.partition,
    offset: String(record.offset),
    key: record.key,
    headers: record.headers,
  };
}
