import {
  MisconfigurationError,
  type EventLogPort,
  type ProcessorSpec,
  type SinkConsumer,
  type SinkConsumerSpec,
  type StageProcessor,
  type StreamPlatform,
  type StreamTopic,
  type TailSpec,
  type TopicTail,
} from '@engram/core';
import { EmbeddedExactlyOnceProcessor } from './embedded-exactly-once-processor';
import { EmbeddedSinkConsumer } from './embedded-sink-consumer';
import { EmbeddedTopicTail } from './embedded-topic-tail';
import type { SqliteEventLog } from './sqlite-event-log';
import { SqliteEventLogAdapter } from './sqlite-event-log.adapter';

/**
 * The embedded StreamPlatform: one SQLite event log that one process owns (SPEC §2). Processors
 * commit outputs, changelogs and offsets in one SQLite transaction; the log belongs to whoever
 * opened it, so `close` leaves it open.
 */
export class EmbeddedStreamPlatform implements StreamPlatform {
  readonly mode = 'embedded';
  private readonly adapter: SqliteEventLogAdapter;

  constructor(readonly log: SqliteEventLog) {
    this.adapter = new SqliteEventLogAdapter(log);
  }

  ensureTopics(topics: readonly StreamTopic[], partitions: number): Promise<void> {
    return settled(() => this.createMissing(topics, partitions));
  }

  private createMissing(topics: readonly StreamTopic[], partitions: number): void {
    for (const { topic, compacted, withDeadLetter } of topics) {
      // As on Kafka, an existing topic is left as it is (its partition count included).
      if (this.log.topic(topic)) continue;
      this.log.ensureTopic(topic, partitions, {
        compacted: compacted ?? false,
        withDeadLetter: withDeadLetter ?? true,
      });
    }
  }

  partitionCount(topics: readonly string[]): Promise<number> {
    return settled(() => this.sharedCount(topics));
  }

  private sharedCount(topics: readonly string[]): number {
    const counts = topics.map((topic) => ({ topic, count: this.log.endOffsets(topic).length }));
    if (counts.length === 0) throw new MisconfigurationError('no topics to count partitions of');
    if (counts.some(({ count }) => count !== counts[0].count)) {
      const shown = counts.map(({ topic, count }) => `${topic}: ${count}`);
      throw new MisconfigurationError(
        `these topics need one partition count (${shown.join(', ')}); ` +
          'the agent topics are co-partitioned by sessionId',
      );
    }
    return counts[0].count;
  }

  readChangelog(topic: string, partitions: readonly number[]): Promise<Map<string, Buffer>> {
    return settled(() => this.log.latestByKey(topic, partitions));
  }

  endOffset(topic: string, partition: number): Promise<number> {
    return settled(() => this.log.endOffsets(topic)[partition] ?? 0);
  }

  committedOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
  ): Promise<Map<number, number>> {
    return settled(() => {
      const committed = this.log.committedOffsets(groupId, topic);
      return new Map(partitions.map((p) => [p, committed.get(p) ?? 0]));
    });
  }

  eventLog(): Promise<EventLogPort> {
    return Promise.resolve(this.adapter);
  }

  createProcessor(spec: ProcessorSpec): Promise<StageProcessor> {
    return Promise.resolve(
      new EmbeddedExactlyOnceProcessor(this.log, {
        groupId: spec.groupId,
        service: spec.service,
        retry: spec.retry,
        ...(spec.onAssignment && { onAssignment: spec.onAssignment }),
      }),
    );
  }

  createSinkConsumer(spec: SinkConsumerSpec): Promise<SinkConsumer> {
    return Promise.resolve(new EmbeddedSinkConsumer(this.log, spec));
  }

  createTail<E>(spec: TailSpec<E>): Promise<TopicTail> {
    return Promise.resolve(new EmbeddedTopicTail(this.log, spec));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The SQLite log answers synchronously; the port's callers expect failures as rejections. */
function settled<T>(read: () => T): Promise<T> {
  try {
    return Promise.resolve(read());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
