import { randomUUID } from 'node:crypto';
import {
  DownstreamUnavailableError,
  type Delivered,
  type TailSpec,
  type TopicTail,
} from '@engram/core';
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { AvroRegistry } from './avro-registry';
import { decodeDelivered } from './delivered-event';
import { whileLeaderMoves } from './kafka-errors';

export interface KafkaTailOptions {
  sessionTimeoutMs?: number;
}

/**
 * The distributed StreamPlatform's tail. KafkaJS has no manual partition assignment (only
 * groups), so a tail is the one member of a group of its own (`engram-tail-<uuid>`), which gets
 * every partition: it seeks each to `admin.fetchTopicOffsetsByTimestamp` (the first offset stamped
 * at or after the spec's time, the end when none is) and never commits (autoCommit off). After a
 * rejoin (a broker restart, a partition added) it seeks again to where it was, so nothing is
 * skipped or read twice; a partition it has no position for is read from its start. The empty
 * group is deleted at stop.
 */
export class KafkaTopicTail<E> implements TopicTail {
  private readonly groupId = `engram-tail-${randomUUID()}`;
  /** The next offset to hand over, per partition (the start offsets until something is read). */
  private readonly next = new Map<number, bigint>();
  private consumer?: Consumer;
  readonly counters = { handled: 0, skipped: 0 };

  constructor(
    private readonly kafka: Kafka,
    private readonly registry: AvroRegistry,
    private readonly admin: Admin,
    private readonly spec: TailSpec<E>,
    private readonly options: KafkaTailOptions = {},
  ) {}

  async start(): Promise<void> {
    const topic = this.spec.codec.topic;
    const starts = await whileLeaderMoves(() =>
      this.admin.fetchTopicOffsetsByTimestamp(topic, this.spec.fromTimestamp),
    );
    for (const { partition, offset } of starts) this.next.set(partition, BigInt(offset));
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      ...(this.options.sessionTimeoutMs !== undefined && {
        sessionTimeout: this.options.sessionTimeoutMs,
      }),
    });
    this.consumer = consumer;
    // Emitted synchronously after every join, before the first fetch of the new assignment.
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      for (const partition of payload.memberAssignment[topic] ?? []) {
        const at = this.next.get(partition);
        if (at !== undefined) consumer.seek({ topic, partition, offset: at.toString() });
      }
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ autoCommit: false, eachBatch: (payload) => this.eachBatch(payload) });
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    if (!consumer) return;
    await consumer.disconnect();
    // Nothing was committed: the group is empty metadata, removed rather than left to expire.
    await this.admin.deleteGroups([this.groupId]).catch(() => undefined);
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { partition } = batch;
    const items: Delivered<E>[] = [];
    let next = this.next.get(partition) ?? 0n;
    for (const message of batch.messages) {
      if (!payload.isRunning()) break;
      const offset = BigInt(message.offset);
      // Batches fetched before a seek took effect may repeat records: hand each over once.
      if (offset < next) continue;
      next = offset + 1n;
      if (message.value === null) continue; // a tombstone: no event
      try {
        items.push(await decodeDelivered(this.registry, this.spec.codec, partition, message));
      } catch (error) {
        // The registry is down: this batch is fetched again (from `next` before it) later.
        if (error instanceof DownstreamUnavailableError) throw error;
        this.skip(partition, message.offset, error);
      }
    }
    if (items.length > 0) {
      try {
        await this.spec.handle(items);
        this.counters.handled += items.length;
      } catch (error) {
        for (const item of items) this.skip(partition, item.offset, error);
      }
    }
    this.next.set(partition, next);
  }

  private skip(partition: number, offset: string, error: unknown): void {
    this.counters.skipped += 1;
    this.spec.onSkipped({ topic: this.spec.codec.topic, partition, offset, error });
  }
}
