import { processMetrics } from '@engram/metrics';
import { Logger } from '@nestjs/common';
import {
  errorMessage,
  type AnyStageOutput,
  type BackoffOptions,
  type Delivered,
  type ExactlyOnceStage,
  type TopicCodec,
} from '@engram/core';
import type {
  Batch,
  Consumer,
  EachBatchPayload,
  Kafka,
  PartitionAssigner,
  Transaction,
} from 'kafkajs';
import type { AvroRegistry } from './avro-registry';
import {
  deadLetterOf,
  messageAt,
  type DeadLetterRecord,
  type DeadLetterWriter,
} from './dead-letter-writer';
import { decodeDelivered } from './delivered-event';
import { EventEncoder } from './event-publisher';
import { consumerReadiness, recordBatchLag } from './consumer-metrics';
import { classifyingKafkaErrors } from './kafka-errors';
import { chunkBySize } from './message-chunks';
import { RecoverableTransactionalProducer } from './transactional-producer';
import { onRecordlessBatches, type RecordlessBatch } from './recordless-batches';
import { PausingRetryHooks, retryUntilSettled, type Attempt, type RetryHooks } from './retry-loop';

// The stage types are transport-neutral (the embedded processor runs the same stages): they live in
// libs/core/src/ports/stream-stage.ts and are re-exported here for existing imports.
export type { AnyStageOutput, ExactlyOnceStage, RawStageOutput, StageOutput } from '@engram/core';

export interface ExactlyOnceOptions {
  groupId: string;
  /**
   * Stable per service instance, so a restarted instance fences its zombie predecessor.
   * (KafkaJS has no KIP-447 group-metadata fencing; a stable id per instance is the usual scheme.)
   */
  transactionalId: string;
  retry: BackoffOptions;
  /** The consumer group session timeout (KafkaJS default 30 s): how soon a crashed member's partitions move. */
  sessionTimeoutMs?: number;
  fromBeginning?: boolean;
  maxUnclassifiedAttempts?: number;
  /** Default: KafkaJS round robin. Stateful stages use coPartitionedAssigner. */
  partitionAssigners?: PartitionAssigner[];
  /** Called after every rebalance with this member's partitions per topic. */
  onAssignment?: (assignment: Record<string, number[]>) => void;
}

interface Route {
  codec: TopicCodec<unknown>;
  stage: ExactlyOnceStage<unknown>;
}

/**
 * Exactly-once Kafka → Kafka: per partition batch, one transaction holds the stage's outputs, the
 * dead letters of poison records and the consumed offsets (`sendOffsets`). Consumers read
 * `read_committed`, so an aborted batch is invisible downstream and is simply processed again.
 */
export class ExactlyOnceProcessor {
  private readonly logger = new Logger(ExactlyOnceProcessor.name);
  private readonly routes = new Map<string, Route>();
  private readonly encoder: EventEncoder;
  private consumer?: Consumer;
  private producer?: RecoverableTransactionalProducer;
  readonly counters = { processed: 0, deadLettered: 0, retries: 0, transactions: 0 };
  /** Batches and timer transactions take turns: one transaction at a time. */
  private turn: Promise<unknown> = Promise.resolve();
  /** This member's partitions per topic, as of the last rebalance. */
  private assignment: Record<string, number[]> = {};
  private removeReadiness?: () => void;

  constructor(
    private readonly kafka: Kafka,
    private readonly registry: AvroRegistry,
    private readonly deadLetters: DeadLetterWriter,
    private readonly options: ExactlyOnceOptions,
  ) {
    this.encoder = new EventEncoder(registry);
  }

  subscribe<E>(codec: TopicCodec<E>, stage: ExactlyOnceStage<E>): this {
    this.routes.set(codec.topic, { codec, stage });
    return this;
  }

  async start(): Promise<void> {
    this.producer = new RecoverableTransactionalProducer(this.kafka, this.options.transactionalId);
    await this.producer.connect();
    this.consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      readUncommitted: false,
      ...(this.options.sessionTimeoutMs !== undefined && {
        sessionTimeout: this.options.sessionTimeoutMs,
      }),
      // Bigger fetches mean bigger batches and fewer transactions: each transaction costs
      // several broker round trips (AddPartitions, Produce, AddOffsets, TxnOffsetCommit, EndTxn).
      maxBytesPerPartition: 4 * 1024 * 1024,
      maxBytes: 16 * 1024 * 1024,
      ...(this.options.partitionAssigners
        ? { partitionAssigners: this.options.partitionAssigners }
        : {}),
    });
    this.removeReadiness = consumerReadiness(this.consumer, this.options.groupId);
    this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => {
      this.assignment = payload.memberAssignment;
      this.options.onAssignment?.(payload.memberAssignment);
    });
    onRecordlessBatches(this.consumer, (passed) => {
      if (this.routes.has(passed.topic)) void this.commitRecordless(passed);
    });
    await this.consumer.connect();
    await this.consumer.subscribe({
      topics: [...this.routes.keys()],
      fromBeginning: this.options.fromBeginning ?? true,
    });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  async stop(): Promise<void> {
    this.removeReadiness?.();
    await this.consumer?.disconnect();
    await this.producer?.disconnect();
    this.consumer = undefined;
    this.producer = undefined;
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
      await this.inTransaction(
        async (transaction) => this.sendOutputs(transaction, await outputs()),
        () => hooks.onAborted?.(),
      );
      hooks.onCommitted?.();
    });
  }

  /**
   * Commits the group past transaction markers (or aborted records) the consumer moved over, in
   * a transaction of offsets only, like every other commit of this group. Retried while the
   * partition is ours: nothing was left unprocessed, but a stage may wait for this offset.
   */
  private async commitRecordless({ topic, partition, nextOffset }: RecordlessBatch): Promise<void> {
    const hooks: RetryHooks = {
      shouldContinue: () =>
        this.consumer !== undefined && (this.assignment[topic] ?? []).includes(partition),
      heartbeat: () => Promise.resolve(),
      onRetry: (error, attempt, delayMs) => {
        this.counters.retries += 1;
        this.logger.warn(
          `retrying the commit of ${topic}[${partition}] past its transaction markers in ${delayMs} ms (attempt ${attempt + 1}): ${errorMessage(error)}`,
        );
      },
    };
    const commit = () =>
      this.inTransaction((transaction) =>
        this.sendOffset(transaction, topic, partition, nextOffset),
      );
    const attempt = await this.inTurn(() => this.retry(commit, hooks));
    if (attempt.kind === 'dead-letter') {
      this.logger.error(
        `could not commit ${topic}[${partition}] past its transaction markers: ${errorMessage(attempt.error)}; the next batch's commit will`,
      );
    }
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work, work);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async sendOutputs(transaction: Transaction, outputs: AnyStageOutput[]): Promise<void> {
    for (const output of outputs) {
      if ('messages' in output) {
        for (const chunk of chunkBySize(output.messages)) {
          await transaction.send({ topic: output.topic, messages: chunk });
        }
        continue;
      }
      if (output.events.length === 0) continue;
      const messages = await Promise.all(
        output.events.map((e) => this.encoder.toMessage(output.codec, e)),
      );
      if (output.partition !== undefined) {
        for (const message of messages) message.partition = output.partition;
      }
      for (const chunk of chunkBySize(messages)) {
        await transaction.send({ topic: output.codec.topic, messages: chunk });
      }
    }
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const route = this.routes.get(batch.topic);
    if (!route || batch.messages.length === 0) return;
    await route.stage.prepare?.(batch.topic, batch.partition);
    await this.inTurn(() => this.processBatch(payload, route));
  }

  private async processBatch(payload: EachBatchPayload, route: Route): Promise<void> {
    const { batch } = payload;
    const batchDone = processMetrics().startBatch(this.options.groupId, batch.topic);
    const hooks = new PausingRetryHooks(payload, (error, attempt, delayMs) => {
      this.counters.retries += 1;
      this.logger.warn(
        `retrying transaction on ${batch.topic}[${batch.partition}] in ${delayMs} ms (attempt ${attempt + 1}): ${errorMessage(error)}`,
      );
    });
    try {
      const decoded = await this.decodeAll(route, batch, hooks);
      if (!decoded) return;
      const settled = await this.runTransaction(
        route,
        batch,
        decoded.items,
        decoded.deadLetters,
        hooks,
      );
      if (!settled) return;
      payload.resolveOffset(batch.messages[batch.messages.length - 1].offset);
      recordBatchLag(this.options.groupId, batch);
    } finally {
      batchDone();
      hooks.resume();
    }
  }

  private async decodeAll(route: Route, batch: Batch, hooks: RetryHooks) {
    const items: Delivered<unknown>[] = [];
    const deadLetters: DeadLetterRecord[] = [];
    for (const message of batch.messages) {
      const attempt = await this.retry(
        () => decodeDelivered(this.registry, route.codec, batch.partition, message),
        hooks,
      );
      if (attempt.kind === 'stopped') return undefined;
      if (attempt.kind === 'done') items.push(attempt.value);
      else deadLetters.push(deadLetterOf(batch, message, attempt.error));
    }
    return { items, deadLetters };
  }

  /**
   * Commits the batch in one transaction. If the stage fails for good on the whole batch, the
   * batch is split: each record in its own transaction, the failing one dead-lettered.
   */
  private async runTransaction(
    route: Route,
    batch: Batch,
    items: Delivered<unknown>[],
    deadLetters: DeadLetterRecord[],
    hooks: RetryHooks,
  ): Promise<boolean> {
    // The batch's end, not its last record: transaction markers (or aborted records) after that
    // record are in the batch too, and kafkajs's position is past them already.
    const lastOffset = batch.lastOffset();
    const whole = await this.retry(
      () => this.commitTransaction(route, batch, items, deadLetters, lastOffset),
      hooks,
    );
    if (whole.kind !== 'dead-letter') return whole.kind === 'done';
    const failedDeadLetters = [...deadLetters];
    for (const [index, item] of items.entries()) {
      const offset = index === items.length - 1 ? lastOffset : item.offset;
      const pending = index === 0 ? failedDeadLetters : [];
      let single = await this.retry(
        () => this.commitTransaction(route, batch, [item], pending, offset),
        hooks,
      );
      if (single.kind === 'dead-letter') {
        const record = deadLetterOf(batch, messageAt(batch, item.offset), single.error);
        single = await this.retry(
          () => this.commitTransaction(route, batch, [], [...pending, record], offset),
          hooks,
        );
      }
      if (single.kind !== 'done') return false;
    }
    return true;
  }

  private async commitTransaction(
    route: Route,
    batch: Batch,
    items: Delivered<unknown>[],
    deadLetters: DeadLetterRecord[],
    lastOffset: string,
  ): Promise<void> {
    await this.inTransaction(
      async (transaction) => {
        const outputs = items.length > 0 ? await route.stage.transform(items) : [];
        await this.sendOutputs(transaction, outputs);
        for (const record of deadLetters) await this.deadLetters.write(record, transaction);
        await this.sendOffset(transaction, batch.topic, batch.partition, next(lastOffset));
      },
      () => route.stage.onAborted?.(),
    );
    route.stage.onCommitted?.();
    this.counters.transactions += 1;
    this.counters.processed += items.length;
    this.counters.deadLettered += deadLetters.length;
    recordCommitted(this.options.groupId, batch.topic, items.length, deadLetters);
  }

  /**
   * Runs `work` in a transaction and commits it. If anything fails once the transaction began, it
   * is aborted and `onAborted` told before the error goes on.
   */
  private async inTransaction(
    work: (transaction: Transaction) => Promise<void>,
    onAborted?: () => void,
  ): Promise<void> {
    const producer = this.requireProducer();
    // A fenced producer (a transaction timed out through an outage) is replaced for the retry.
    const transaction = await producer.transaction().catch((error: unknown) => {
      producer.failed(error);
      throw error;
    });
    try {
      await work(transaction);
      await transaction.commit();
    } catch (error) {
      producer.failed(error);
      await transaction.abort().catch((abortError: unknown) => {
        producer.failed(abortError);
        this.logger.error(`abort failed: ${errorMessage(abortError)}`);
      });
      onAborted?.();
      throw error;
    }
  }

  /** The group's position on one partition, committed with the transaction. */
  private sendOffset(
    transaction: Transaction,
    topic: string,
    partition: number,
    offset: string,
  ): Promise<void> {
    return transaction.sendOffsets({
      consumerGroupId: this.options.groupId,
      topics: [{ topic, partitions: [{ partition, offset }] }],
    });
  }

  private requireProducer(): RecoverableTransactionalProducer {
    if (!this.producer) throw new Error('ExactlyOnceProcessor is not started');
    return this.producer;
  }

  /** Broker outages are classified retriable (classifyKafkaError): waited out, never dead-lettered. */
  private retry<T>(work: () => Promise<T>, hooks: RetryHooks): Promise<Attempt<T>> {
    return retryUntilSettled(
      () => classifyingKafkaErrors(work),
      hooks,
      this.options.retry,
      this.options.maxUnclassifiedAttempts ?? 5,
    );
  }
}

/** The committed batch's events and dead letters, in the process's metrics. */
function recordCommitted(
  groupId: string,
  topic: string,
  consumed: number,
  deadLetters: DeadLetterRecord[],
): void {
  const metrics = processMetrics();
  metrics.recordConsumed(groupId, topic, consumed);
  for (const { error } of deadLetters) metrics.recordDeadLetter(groupId, topic, error);
}

function next(offset: string): string {
  return (BigInt(offset) + 1n).toString();
}
