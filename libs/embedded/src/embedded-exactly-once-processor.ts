import {
  backoffDelayMs,
  deadLetterHeaders,
  deadLetterTopic,
  errorMessage,
  retryUntilSettled,
  type AnyStageOutput,
  type Attempt,
  type BackoffOptions,
  type Delivered,
  type ExactlyOnceStage,
  type RetryHooks,
  type TopicCodec,
} from '@engram/core';
import { processMetrics } from '@engram/metrics';
import { Logger } from '@nestjs/common';
import { watchEmbeddedConsumer } from './consumer-metrics';
import { decodeEvent, encodeEvent } from './json-event-codec';
import {
  classifyStorageError,
  UnknownTopicError,
  type AppendRecord,
  type LogRecord,
  type SqliteEventLog,
} from './sqlite-event-log';
import { PollSleep } from './poll-sleep';

export interface EmbeddedExactlyOnceOptions {
  groupId: string;
  /** The service named in dead-letter headers (libs/kafka's DeadLetterWriter takes it too). */
  service: string;
  retry: BackoffOptions;
  /** Where a group without committed offsets starts: the beginning (default) or the end. */
  fromBeginning?: boolean;
  maxUnclassifiedAttempts?: number;
  /**
   * Called once at start with every partition of every subscribed topic: in embedded mode one
   * process owns them all (one processor per group; a second one on the same group is not
   * supported).
   */
  onAssignment?: (assignment: Record<string, number[]>) => void;
  /** Records per batch, per partition (default 500). */
  maxBatchRecords?: number;
  /** How often an idle topic is polled for records other processes appended (default 100 ms). */
  pollIntervalMs?: number;
  clock?: () => Date;
}

interface Route {
  codec: TopicCodec<unknown>;
  stage: ExactlyOnceStage<unknown>;
}

interface DeadLetter {
  record: LogRecord;
  error: unknown;
}

interface TopicRecords {
  topic: string;
  records: AppendRecord[];
}

/**
 * Exactly-once SQLite → SQLite: the embedded twin of libs/kafka's ExactlyOnceProcessor, running
 * the same ExactlyOnceStage objects. One poll loop per subscribed topic reads each partition's
 * records after the group's committed offset; per batch, ONE SQLite transaction holds the stage's
 * outputs, the dead letters of poison records and the group's new offset, so a crash at any point
 * leaves either all of them or none. A failed batch is aborted (`onAborted`) and retried with
 * backoff; a batch that fails for good is split, the failing record dead-lettered.
 */
export class EmbeddedExactlyOnceProcessor {
  private readonly logger = new Logger(EmbeddedExactlyOnceProcessor.name);
  private readonly routes = new Map<string, Route>();
  readonly counters = { processed: 0, deadLettered: 0, retries: 0, transactions: 0 };
  /** Batches and timer transactions take turns: one transaction at a time. */
  private turn: Promise<unknown> = Promise.resolve();
  /** Next offset to read, per topic and partition (= the group's committed offsets). */
  private readonly positions = new Map<string, number[]>();
  private readonly pause = new PollSleep();
  private loops: Promise<void>[] = [];
  private running = false;
  private stopAppendWatch?: () => void;
  private stopMetrics?: () => void;

  constructor(
    private readonly log: SqliteEventLog,
    private readonly options: EmbeddedExactlyOnceOptions,
  ) {}

  subscribe<E>(codec: TopicCodec<E>, stage: ExactlyOnceStage<E>): this {
    if (this.running) throw new Error('subscribe before start()');
    this.routes.set(codec.topic, { codec, stage });
    return this;
  }

  /** Starts a poll loop per subscribed topic. The topics must exist; their DLQs are created. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      this.startPolling();
      resolve();
    });
  }

  private startPolling(): void {
    if (this.running) return;
    const assignment: Record<string, number[]> = {};
    for (const topic of this.routes.keys()) {
      const info = this.log.topic(topic);
      if (!info) {
        throw new UnknownTopicError(`cannot subscribe to ${topic}: the topic does not exist`, {
          topic,
        });
      }
      const dlq = deadLetterTopic(topic);
      if (!this.log.topic(dlq)) this.log.ensureTopic(dlq, 1);
      const committed = this.log.committedOffsets(this.options.groupId, topic);
      const ends = this.log.endOffsets(topic);
      const start = (p: number) => ((this.options.fromBeginning ?? true) ? 0 : ends[p]);
      const partitions = Array.from({ length: info.partitions }, (_, p) => p);
      this.positions.set(
        topic,
        partitions.map((p) => committed.get(p) ?? start(p)),
      );
      assignment[topic] = partitions;
    }
    this.running = true;
    this.stopAppendWatch = this.log.onAppend((topic) => {
      if (this.routes.has(topic)) this.wakeUp();
    });
    this.stopMetrics = watchEmbeddedConsumer(
      this.log,
      this.options.groupId,
      this.positions,
      () => this.running,
    );
    this.options.onAssignment?.(assignment);
    this.loops = [...this.routes.keys()].map((topic) => this.pollLoop(topic));
  }

  /**
   * Stops polling and waits for the batch in flight (and a produceTransactionally in flight) to
   * commit; a batch waiting to retry is given up uncommitted and comes again at the next start.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopAppendWatch?.();
    this.stopAppendWatch = undefined;
    this.stopMetrics?.();
    this.stopMetrics = undefined;
    this.wakeUp();
    await Promise.all(this.loops);
    await this.turn;
    this.loops = [];
  }

  /**
   * Commits outputs that no consumed record caused (a timer's), in a transaction of their own,
   * never interleaved with a batch's transaction.
   */
  async produceTransactionally(
    outputs: () => AnyStageOutput[] | Promise<AnyStageOutput[]>,
    hooks: Pick<ExactlyOnceStage<unknown>, 'onCommitted' | 'onAborted'> = {},
  ): Promise<void> {
    await this.inTurn(async () => {
      if (!this.running) throw new Error('EmbeddedExactlyOnceProcessor is not started');
      try {
        const rows = encodeOutputs(await outputs());
        this.log.transaction(() => {
          for (const { topic, records } of rows) this.log.append(topic, records);
        });
      } catch (error) {
        hooks.onAborted?.();
        throw classifyStorageError(error);
      }
      hooks.onCommitted?.();
      this.counters.transactions += 1;
    });
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work, work);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async pollLoop(topic: string): Promise<void> {
    const route = this.routes.get(topic)!;
    const partitions = this.positions.get(topic)!.length;
    let failures = 0;
    while (this.running) {
      let busy = false;
      for (let partition = 0; partition < partitions && this.running; partition++) {
        try {
          busy = (await this.pollPartition(route, topic, partition)) || busy;
          failures = 0;
        } catch (error) {
          // Not a stage failure (those are retried inside the batch): the log itself failed.
          // Nothing was committed; the same records are read again after a pause.
          const delay = backoffDelayMs(failures++, this.options.retry);
          this.counters.retries += 1;
          this.logger.error(
            `${topic}[${partition}]: ${errorMessage(error)}; reading again in ${delay} ms`,
          );
          await this.idle(delay);
        }
      }
      if (!busy) await this.idle(this.options.pollIntervalMs ?? 100);
    }
  }

  /** Processes one batch of the partition if it has new records; true when it had some. */
  private async pollPartition(route: Route, topic: string, partition: number): Promise<boolean> {
    const from = this.positions.get(topic)![partition];
    const records = this.log.read(topic, partition, from, this.options.maxBatchRecords ?? 500);
    if (records.length === 0) return false;
    await route.stage.prepare?.(topic, partition);
    await this.inTurn(() => this.processBatch(route, topic, partition, records));
    return true;
  }

  private async processBatch(
    route: Route,
    topic: string,
    partition: number,
    records: LogRecord[],
  ): Promise<void> {
    const batchDone = processMetrics().startBatch(this.options.groupId, topic);
    const hooks: RetryHooks = {
      shouldContinue: () => this.running,
      heartbeat: () => Promise.resolve(),
      onRetry: (error, attempt, delayMs) => {
        this.counters.retries += 1;
        this.logger.warn(
          `retrying transaction on ${topic}[${partition}] in ${delayMs} ms (attempt ${attempt + 1}): ${errorMessage(error)}`,
        );
      },
    };
    const items: Delivered<unknown>[] = [];
    const deadLetters: DeadLetter[] = [];
    for (const record of records) {
      try {
        items.push(decodeEvent(route.codec, record));
      } catch (error) {
        deadLetters.push({ record, error });
      }
    }
    try {
      await this.runTransaction(route, records, items, deadLetters, hooks);
    } finally {
      batchDone();
    }
  }

  /**
   * Commits the batch in one transaction. If the stage fails for good on the whole batch, the
   * batch is split: each record in its own transaction, the failing one dead-lettered.
   */
  private async runTransaction(
    route: Route,
    records: LogRecord[],
    items: Delivered<unknown>[],
    deadLetters: DeadLetter[],
    hooks: RetryHooks,
  ): Promise<void> {
    const lastOffset = records[records.length - 1].offset;
    const { topic, partition } = records[0];
    const whole = await this.retry(
      () => this.commitTransaction(route, topic, partition, items, deadLetters, lastOffset),
      hooks,
    );
    if (whole.kind !== 'dead-letter') return;
    // Only the dead letters themselves failed for good: never skip them; the poll loop backs off.
    if (items.length === 0) throw whole.error;
    for (const [index, item] of items.entries()) {
      const offset = index === items.length - 1 ? lastOffset : Number(item.offset);
      const pending = index === 0 ? deadLetters : [];
      let single = await this.retry(
        () => this.commitTransaction(route, topic, partition, [item], pending, offset),
        hooks,
      );
      if (single.kind === 'dead-letter') {
        const record = records.find((r) => r.offset === Number(item.offset))!;
        const failed = [...pending, { record, error: single.error }];
        single = await this.retry(
          () => this.commitTransaction(route, topic, partition, [], failed, offset),
          hooks,
        );
      }
      if (single.kind !== 'done') return;
    }
  }

  private async commitTransaction(
    route: Route,
    topic: string,
    partition: number,
    items: Delivered<unknown>[],
    deadLetters: DeadLetter[],
    lastOffset: number,
  ): Promise<void> {
    try {
      const outputs = items.length > 0 ? await route.stage.transform(items) : [];
      const rows = encodeOutputs(outputs);
      const letters = deadLetters.map((letter) => this.deadLetterRecord(letter));
      this.log.transaction(() => {
        for (const { topic: to, records } of rows) this.log.append(to, records);
        if (letters.length > 0) this.log.append(deadLetterTopic(topic), letters);
        this.log.commitOffsets(this.options.groupId, topic, new Map([[partition, lastOffset + 1]]));
      });
    } catch (error) {
      route.stage.onAborted?.();
      throw classifyStorageError(error);
    }
    this.positions.get(topic)![partition] = lastOffset + 1;
    route.stage.onCommitted?.();
    this.counters.transactions += 1;
    this.counters.processed += items.length;
    this.counters.deadLettered += deadLetters.length;
    this.recordCommitted(topic, items.length, deadLetters);
  }

  private recordCommitted(topic: string, consumed: number, deadLetters: DeadLetter[]): void {
    const metrics = processMetrics();
    metrics.recordConsumed(this.options.groupId, topic, consumed);
    for (const { error } of deadLetters) {
      metrics.recordDeadLetter(this.options.groupId, topic, error);
    }
  }

  /** The original record, unchanged, with headers naming the error and the source (SPEC §11). */
  private deadLetterRecord({ record, error }: DeadLetter): AppendRecord {
    const now = this.options.clock?.() ?? new Date();
    return {
      key: record.key,
      value: record.value,
      headers: deadLetterHeaders(
        error,
        { topic: record.topic, partition: record.partition, offset: String(record.offset) },
        this.options.service,
        now,
      ),
    };
  }

  private retry<T>(work: () => Promise<T>, hooks: RetryHooks): Promise<Attempt<T>> {
    return retryUntilSettled(
      work,
      hooks,
      this.options.retry,
      this.options.maxUnclassifiedAttempts ?? 5,
    );
  }

  private idle(ms: number): Promise<void> {
    return this.running ? this.pause.sleep(ms) : Promise.resolve();
  }

  private wakeUp(): void {
    this.pause.wakeAll();
  }
}

/** Stage outputs → records per topic: typed events via their codec, raw messages as they are. */
export function encodeOutputs(outputs: AnyStageOutput[]): TopicRecords[] {
  const rows: TopicRecords[] = [];
  for (const output of outputs) {
    if ('messages' in output) {
      if (output.messages.length === 0) continue;
      rows.push({
        topic: output.topic,
        records: output.messages.map((message) => ({
          key: message.key,
          value: message.value,
          headers: message.headers,
          partition: message.partition,
          timestamp: message.timestamp === undefined ? undefined : Number(message.timestamp),
        })),
      });
      continue;
    }
    if (output.events.length === 0) continue;
    rows.push({
      topic: output.codec.topic,
      records: output.events.map((event) => encodeEvent(output.codec, event, output.partition)),
    });
  }
  return rows;
}
