import { randomUUID } from 'node:crypto';
import {
  DeadLetterWriter,
  ensureTopics,
  EventPublisher,
  ExactlyOnceProcessor,
  ReliableConsumer,
  reliableProducerConfig,
  type TopicCodec,
} from '@engram/kafka';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchCodec, testKafka, testRegistry, type ScratchEvent } from './support/kafka-fixtures';
import { eventually, uniqueName } from './support/unique';

/**
 * A topic written in transactions ends with a commit marker: an offset no record has. Our
 * consumers commit by hand after each batch's last record, so unless they also commit past the
 * markers kafkajs skips, their group stays one offset short of the end for good (the distiller
 * once waited forever on that for a session's end).
 */
describe('consumer groups on topics written in transactions', () => {
  const kafka = testKafka();
  const registry = testRegistry();
  const publisher = new EventPublisher(kafka, registry);
  const deadLetters = new DeadLetterWriter(kafka, 'it');

  beforeAll(async () => {
    await publisher.connect();
    await deadLetters.connect();
  });

  afterAll(async () => {
    await publisher.disconnect();
    await deadLetters.disconnect();
  });

  /**
   * Waits for the group to reach the end of the topic; then again after an aborted transaction (a
   * fetch of nothing but aborted records and their marker). Returns the records seen each time.
   */
  async function seenAtTheEnd(groupId: string, input: Input, seen: () => number) {
    await reachesEnd(kafka, groupId, input, seen);
    const first = seen();
    input.end = await writeTransactions(kafka, publisher, input.codec, ['abort']);
    await reachesEnd(kafka, groupId, input, seen);
    return [first, seen()];
  }

  it('should commit an exactly-once processor to the end of the log, past the last marker', async () => {
    const input = await transactionalTopic(kafka, publisher, 'it.markers-eos');
    const groupId = uniqueName('group');
    let seen = 0;
    const processor = new ExactlyOnceProcessor(kafka, registry, deadLetters, {
      groupId,
      transactionalId: uniqueName('eos'),
      retry: { initialMs: 50, maxMs: 200 },
    }).subscribe(input.codec, {
      transform: (items) => {
        seen += items.length;
        return [];
      },
    });
    await processor.start();
    try {
      expect(await seenAtTheEnd(groupId, input, () => seen)).toEqual([4, 4]);
    } finally {
      await processor.stop();
    }
  });

  it('should commit a reliable consumer to the end of the log, past the last marker', async () => {
    const input = await transactionalTopic(kafka, publisher, 'it.markers-reliable');
    const groupId = uniqueName('group');
    let seen = 0;
    const consumer = new ReliableConsumer(kafka, registry, deadLetters, {
      groupId,
      retry: { initialMs: 50, maxMs: 200 },
    }).subscribe(input.codec, (items) => {
      seen += items.length;
    });
    await consumer.start();
    try {
      expect(await seenAtTheEnd(groupId, input, () => seen)).toEqual([4, 4]);
    } finally {
      await consumer.stop();
    }
  });
});

interface Input {
  codec: TopicCodec<ScratchEvent>;
  topic: string;
  /** The topic's end offset, markers included. */
  end: number;
}

/**
 * A one-partition topic holding two committed transactions of two records each and an aborted
 * one between them: 4 records a read_committed consumer sees, 2 aborted ones, 3 markers.
 */
async function transactionalTopic(
  kafka: Kafka,
  publisher: EventPublisher,
  prefix: string,
): Promise<Input> {
  const codec: TopicCodec<ScratchEvent> = scratchCodec(uniqueName(prefix));
  await ensureTopics(kafka, [{ topic: codec.topic, partitions: 1, withDeadLetter: false }]);
  const input: Input = { codec, topic: codec.topic, end: 0 };
  input.end = await writeTransactions(kafka, publisher, codec, ['commit', 'abort', 'commit']);
  // 6 records and 3 markers: the end is past the last marker, one beyond the last record.
  expect(input.end).toBe(9);
  return input;
}

/**
 * Writes a transaction of two records per outcome; returns the topic's end offset once it counts
 * them and their markers (3 offsets each): a busy broker may show the end before an abort's
 * marker (a test read 9 where the end was 12).
 */
async function writeTransactions(
  kafka: Kafka,
  publisher: EventPublisher,
  codec: TopicCodec<ScratchEvent>,
  outcomes: readonly ('commit' | 'abort')[],
): Promise<number> {
  const expectedEnd = (await endOffset(kafka, codec.topic)) + 3 * outcomes.length;
  const producer = kafka.producer(
    reliableProducerConfig({ transactionalId: uniqueName('upstream') }),
  );
  await producer.connect();
  try {
    for (const outcome of outcomes) {
      const transaction = await producer.transaction();
      const events = ['a', 'b'].map((text) => ({ eventId: randomUUID(), sessionId: 's', text }));
      await publisher.publish(codec, events, transaction);
      await (outcome === 'commit' ? transaction.commit() : transaction.abort());
    }
  } finally {
    await producer.disconnect();
  }
  let end = -1;
  await eventually(
    async () => {
      end = await endOffset(kafka, codec.topic);
      return end >= expectedEnd || undefined;
    },
    { timeoutMs: 20_000, state: () => ({ end, expectedEnd }) },
  );
  return end;
}

/**
 * The topic's end offset. A topic created a moment ago may still answer "not the leader" (KRaft
 * settling, as after the outage test's broker restart): retriable, so asked again.
 */
async function endOffset(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await eventually(async () => {
      try {
        const [offsets] = await admin.fetchTopicOffsets(topic);
        return Number(offsets.high);
      } catch (error) {
        if ((error as { retriable?: boolean }).retriable === true) return undefined;
        throw error;
      }
    });
  } finally {
    await admin.disconnect();
  }
}

/** Waits until the group's committed offset is the end of the topic; fails saying where it is. */
async function reachesEnd(
  kafka: Kafka,
  groupId: string,
  input: { topic: string; end: number },
  seen: () => number,
): Promise<void> {
  let committed = -1;
  await eventually(
    async () => {
      committed = await committedOffset(kafka, groupId, input.topic);
      return committed === input.end || undefined;
    },
    { timeoutMs: 20_000, state: () => ({ committed, end: input.end, seen: seen() }) },
  );
}

async function committedOffset(kafka: Kafka, groupId: string, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return Number(committed.partitions[0]?.offset ?? -1);
  } finally {
    await admin.disconnect();
  }
}
