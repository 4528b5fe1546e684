import { processMetrics } from '@engram/metrics';
import { Logger } from '@nestjs/common';
import { errorMessage, type BackoffOptions } from '@engram/core';
import type { Batch, Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { AvroRegistry } from './avro-registry';
import { deadLetterOf, messageAt, type DeadLetterWriter } from './dead-letter-writer';
import {
  decodeDelivered,
  deliveredTombstone,
  type Delivered,
  type DeliveredOrTombstone,
} from './delivered-event';
import { consumerReadiness, recordBatchLag } from './consumer-metrics';
import { onRecordlessBatches } from './recordless-batches';
import { PausingRetryHooks, retryUntilSettled, type Attempt, type RetryHooks } from './retry-loop';
import type { TopicCodec } from './topic-codec';

export type BatchHandler<E> = (items: Delivered<E>[]) => Promise<void> | void;

/** The handler of a subscription with `tombstones: true`: it has to handle `event: null`. */
export type TombstoneBatchHandler<E> = (items: DeliveredOrTombstone<E>[]) => Promise<void> | void;

export interface SubscribeOptions {
  /**
   * Hand records with a null value (tombstones: on a compacted topic they delete their key) to the
   * handler as `event: null` with their key, without decoding them. A tombstone without a key is
   * dead-lettered (InvalidEventError). Default false: a null value is a DecodeError (dead-lettered).
   */
  tombstones?: boolean;
}

export interface ReliableConsumerOptions {
  groupId: string;
  retry: BackoffOptions;
  /** The consumer group session timeout (KafkaJS default 30 s): how soon a crashed member's partitions move. */
  sessionTimeoutMs?: number;
  fromBeginning?: boolean;
  /** Retries for errors nobody classified, before they are dead-lettered. */
  maxUnclassifiedAttempts?: number;
}

interface Route {
  codec: TopicCodec<unknown>;
  handle: TombstoneBatchHandler<unknown>;
  tombstones: boolean;
}

export interface ConsumerCounters {
  processed: number;
  deadLettered: number;
  retries: number;
}

/**
 * At-least-once consumer for sinks (Elasticsearch, Neo4j): a batch is decoded, poison records go
 * to the DLQ, the rest go to the handler, and the offset is committed only after the handler
 * succeeded. Outages pause the partition and retry with backoff for as long as it takes; nothing
 * is ever skipped. Handlers must be idempotent (they are: every write is an upsert by id).
 * Tombstones (null values) reach only the handlers that subscribed with `{ tombstones: true }`;
 * elsewhere they are poison like any other undecodable value.
 */
export class ReliableConsumer {
  private readonly logger = new Logger(ReliableConsumer.name);
  private readonly routes = new Map<string, Route>();
  private consumer?: Consumer;
  private removeReadiness?: () => void;
  readonly counters: ConsumerCounters = { processed: 0, deadLettered: 0, retries: 0 };

  constructor(
    private readonly kafka: Kafka,
    private readonly registry: AvroRegistry,
    private readonly deadLetters: DeadLetterWriter,
    private readonly options: ReliableConsumerOptions,
  ) {}

  /**
   * Routes `codec.topic` to `handle`. With `{ tombstones: true }` the handler receives tombstones
   * too (`DeliveredOrTombstone<E>`, so it cannot ignore them); without, `Delivered<E>` only.
   */
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: BatchHandler<E>,
    options?: SubscribeOptions & { tombstones?: false },
  ): this;
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: TombstoneBatchHandler<E>,
    options: SubscribeOptions,
  ): this;
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: BatchHandler<E> | TombstoneBatchHandler<E>,
    options: SubscribeOptions = {},
  ): this {
    this.routes.set(codec.topic, {
      codec,
      handle,
      tombstones: options.tombstones ?? false,
    } as Route);
    return this;
  }

  async start(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      readUncommitted: false,
      ...(this.options.sessionTimeoutMs !== undefined && {
        sessionTimeout: this.options.sessionTimeoutMs,
      }),
    });
    this.consumer = consumer;
    this.removeReadiness = consumerReadiness(consumer, this.options.groupId);
    onRecordlessBatches(consumer, ({ topic, partition, nextOffset }) => {
      if (!this.routes.has(topic)) return;
      // Only progress: if it fails, the next batch's commit goes past the markers anyway.
      consumer
        .commitOffsets([{ topic, partition, offset: nextOffset }])
        .catch((error: unknown) =>
          this.logger.warn(
            `could not commit ${topic}[${partition}] past its transaction markers: ${errorMessage(error)}`,
          ),
        );
    });
    await consumer.connect();
    await consumer.subscribe({
      topics: [...this.routes.keys()],
      fromBeginning: this.options.fromBeginning ?? true,
    });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  /** Graceful: lets the batch in hand finish (or abandon its retry), commits, leaves the group. */
  async stop(): Promise<void> {
    this.removeReadiness?.();
    await this.consumer?.disconnect();
    this.consumer = undefined;
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const route = this.routes.get(batch.topic);
    if (!route || batch.messages.length === 0) return;
    const batchDone = processMetrics().startBatch(this.options.groupId, batch.topic);
    const hooks = new PausingRetryHooks(payload, (error, attempt, delayMs) => {
      this.counters.retries += 1;
      this.logger.warn(
        `retrying ${batch.topic}[${batch.partition}] in ${delayMs} ms (attempt ${attempt + 1}): ${errorMessage(error)}`,
      );
    });
    try {
      const items = await this.decodeAll(route, batch, hooks);
      if (!items || !(await this.handleAll(route, items, batch, hooks))) return;
      await this.commit(batch, payload);
      recordBatchLag(this.options.groupId, batch);
    } finally {
      batchDone();
      hooks.resume();
    }
  }

  /** Decodes every record; poison records are dead-lettered. Undefined: the consumer stopped. */
  private async decodeAll(
    route: Route,
    batch: Batch,
    hooks: RetryHooks,
  ): Promise<DeliveredOrTombstone<unknown>[] | undefined> {
    const items: DeliveredOrTombstone<unknown>[] = [];
    for (const message of batch.messages) {
      const attempt = await this.retry(
        async () =>
          route.tombstones && message.value === null
            ? deliveredTombstone(route.codec.topic, batch.partition, message)
            : await decodeDelivered(this.registry, route.codec, batch.partition, message),
        hooks,
      );
      if (attempt.kind === 'stopped') return undefined;
      if (attempt.kind === 'done') items.push(attempt.value);
      else if (!(await this.deadLetter(batch, message, attempt.error, hooks))) return undefined;
    }
    return items;
  }

  /**
   * Hands the batch over; if it fails for good, falls back to one record at a time so only the
   * record that cannot be processed goes to the DLQ. False: the consumer stopped.
   */
  private async handleAll(
    route: Route,
    items: DeliveredOrTombstone<unknown>[],
    batch: Batch,
    hooks: RetryHooks,
  ): Promise<boolean> {
    if (items.length === 0) return true;
    const whole = await this.retry(async () => route.handle(items), hooks);
    if (whole.kind === 'stopped') return false;
    if (whole.kind === 'done') {
      this.countProcessed(batch.topic, items.length);
      return true;
    }
    for (const item of items) {
      const single =
        items.length === 1 ? whole : await this.retry(async () => route.handle([item]), hooks);
      if (single.kind === 'stopped') return false;
      if (single.kind === 'done') this.countProcessed(batch.topic, 1);
      else if (
        !(await this.deadLetter(batch, messageAt(batch, item.offset), single.error, hooks))
      ) {
        return false;
      }
    }
    return true;
  }

  private async deadLetter(
    batch: Batch,
    message: KafkaMessage,
    error: unknown,
    hooks: RetryHooks,
  ): Promise<boolean> {
    this.logger.error(
      `dead-lettering ${batch.topic}[${batch.partition}]@${message.offset}: ${errorMessage(error)}`,
    );
    const written = await this.retry(
      () => this.deadLetters.write(deadLetterOf(batch, message, error)),
      hooks,
    );
    if (written.kind !== 'done') return false;
    this.counters.deadLettered += 1;
    processMetrics().recordDeadLetter(this.options.groupId, batch.topic, error);
    return true;
  }

  private countProcessed(topic: string, count: number): void {
    this.counters.processed += count;
    processMetrics().recordConsumed(this.options.groupId, topic, count);
  }

  /**
   * Commits the batch up to its end, not just its last record: transaction markers (or aborted
   * records) after that record are in the batch too, and kafkajs's position is past them already.
   */
  private async commit(batch: Batch, payload: EachBatchPayload): Promise<void> {
    payload.resolveOffset(batch.messages[batch.messages.length - 1].offset);
    await this.consumer?.commitOffsets([
      {
        topic: batch.topic,
        partition: batch.partition,
        offset: (BigInt(batch.lastOffset()) + 1n).toString(),
      },
    ]);
  }

  private retry<T>(work: () => Promise<T>, hooks: RetryHooks): Promise<Attempt<T>> {
    return retryUntilSettled(
      work,
      hooks,
      this.options.retry,
      this.options.maxUnclassifiedAttempts ?? 5,
    );
  }
}
