import { randomUUID } from 'node:crypto';
import {
  DeadLetterWriter,
  deadLetterTopic,
  DLQ_HEADERS,
  ensureTopics,
  EventPublisher,
  ReliableConsumer,
  type DeliveredOrTombstone,
} from '@engram/kafka';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readCommitted,
  scratchCodec,
  testKafka,
  testRegistry,
  type ScratchEvent,
} from './support/kafka-fixtures';
import { eventually, uniqueName } from './support/unique';

const event = (sessionId: string, text: string): ScratchEvent => ({
  eventId: randomUUID(),
  sessionId,
  text,
});

async function committedOffset(kafka: Kafka, groupId: string, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return Number(entry.partitions[0].offset);
  } finally {
    await admin.disconnect();
  }
}

describe('ReliableConsumer tombstones on real Kafka', () => {
  const kafka = testKafka();
  const registry = testRegistry();
  const publisher = new EventPublisher(kafka, registry);
  const raw = kafka.producer();
  const deadLetters = new DeadLetterWriter(kafka, 'it-tombstones');

  beforeAll(async () => {
    await Promise.all([publisher.connect(), raw.connect(), deadLetters.connect()]);
  });

  afterAll(async () => {
    await Promise.all([publisher.disconnect(), raw.disconnect(), deadLetters.disconnect()]);
  });

  it('should hand tombstones to a route that takes them, commit them, and keep them poison elsewhere', async () => {
    const compacted = uniqueName('it.tombstones.compacted');
    const plain = uniqueName('it.tombstones.plain');
    const compactedCodec = scratchCodec(compacted);
    const plainCodec = scratchCodec(plain);
    await ensureTopics(kafka, [
      { topic: compacted, partitions: 1, compacted: true },
      { topic: plain, partitions: 1 },
    ]);
    // compacted: 0 event, 1 tombstone, 2 tombstone with an empty key (poison), 3 event.
    await publisher.publish(compactedCodec, [event('k-1', 'first')]);
    await raw.send({
      topic: compacted,
      messages: [
        { key: 'k-gone', value: null, headers: { origin: 'it' } },
        { key: '', value: null },
      ],
    });
    await publisher.publish(compactedCodec, [event('k-2', 'second')]);
    // plain: 0 event, 1 tombstone (poison: this route does not take tombstones), 2 event.
    await publisher.publish(plainCodec, [event('p-1', 'third')]);
    await raw.send({ topic: plain, messages: [{ key: 'p-gone', value: null }] });
    await publisher.publish(plainCodec, [event('p-2', 'fourth')]);

    const onCompacted: DeliveredOrTombstone<ScratchEvent>[] = [];
    const onPlain: string[] = [];
    const groupId = uniqueName('group');
    const consumer = new ReliableConsumer(kafka, registry, deadLetters, {
      groupId,
      retry: { initialMs: 50, maxMs: 500 },
    })
      .subscribe(compactedCodec, (items) => void onCompacted.push(...items), { tombstones: true })
      .subscribe(plainCodec, (items) => void onPlain.push(...items.map((i) => i.event.text)));
    let deadCompacted: KafkaMessage[];
    let deadPlain: KafkaMessage[];
    await consumer.start();
    try {
      await eventually(() => (onCompacted.length >= 3 && onPlain.length >= 2 ? true : undefined));
      [deadCompacted, deadPlain] = await Promise.all([
        readCommitted(kafka, deadLetterTopic(compacted), 1),
        readCommitted(kafka, deadLetterTopic(plain), 1),
      ]);
      await eventually(async () =>
        (await committedOffset(kafka, groupId, compacted)) === 4 &&
        (await committedOffset(kafka, groupId, plain)) === 3
          ? true
          : undefined,
      );
    } finally {
      await consumer.stop();
    }

    expect(
      onCompacted.map((item) => [
        item.offset,
        item.key,
        item.event === null ? null : item.event.text,
      ]),
    ).toEqual([
      ['0', 'k-1', 'first'],
      ['1', 'k-gone', null],
      ['3', 'k-2', 'second'],
    ]);
    expect(onCompacted[1].headers?.origin?.toString()).toBe('it');
    expect(onPlain).toEqual(['third', 'fourth']);
    expect(consumer.counters).toMatchObject({ processed: 5, deadLettered: 2 });

    const header = (message: KafkaMessage, name: string) => message.headers?.[name]?.toString();
    const [keyless] = deadCompacted;
    expect(header(keyless, DLQ_HEADERS.errorClass)).toBe('InvalidEventError');
    expect(header(keyless, DLQ_HEADERS.errorMessage)).toMatch(/has no key/);
    expect(header(keyless, DLQ_HEADERS.sourceOffset)).toBe('2');
    expect(keyless.value).toBeNull();

    const [poison] = deadPlain;
    expect(poison.key?.toString()).toBe('p-gone');
    expect(poison.value).toBeNull();
    expect(header(poison, DLQ_HEADERS.errorClass)).toBe('DecodeError');
    expect(header(poison, DLQ_HEADERS.errorMessage)).toMatch(/empty message value/);
    expect(header(poison, DLQ_HEADERS.sourceTopic)).toBe(plain);
    expect(header(poison, DLQ_HEADERS.sourcePartition)).toBe('0');
    expect(header(poison, DLQ_HEADERS.sourceOffset)).toBe('1');
    expect(header(poison, DLQ_HEADERS.service)).toBe('it-tombstones');
  });
});
