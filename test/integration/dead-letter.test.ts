import { randomUUID } from 'node:crypto';
import {
  DeadLetterWriter,
  deadLetterTopic,
  DLQ_HEADERS,
  ensureTopics,
  EventPublisher,
  ReliableConsumer,
  writeWireFrame,
} from '@engram/kafka';
import { DownstreamUnavailableError } from '@engram/core';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readCommitted,
  scratchCodec,
  testKafka,
  testRegistry,
  type ScratchEvent,
} from './support/kafka-fixtures';
import { eventually, uniqueName } from './support/unique';

const event = (text: string, eventId: string = randomUUID()): ScratchEvent => ({
  eventId,
  sessionId: 's1',
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

describe('ReliableConsumer', () => {
  const kafka = testKafka();
  const registry = testRegistry();
  const publisher = new EventPublisher(kafka, registry);
  const raw = kafka.producer();
  const deadLetters = new DeadLetterWriter(kafka, 'it-service');

  beforeAll(async () => {
    await Promise.all([publisher.connect(), raw.connect(), deadLetters.connect()]);
  });

  afterAll(async () => {
    await Promise.all([publisher.disconnect(), raw.disconnect(), deadLetters.disconnect()]);
  });

  it('should dead-letter poison records with their headers and go on with the next good one', async () => {
    const topic = uniqueName('it.poison');
    const codec = scratchCodec(topic);
    await ensureTopics(kafka, [{ topic, partitions: 1 }]);
    await publisher.publish(codec, [event('first good')]);
    await raw.send({
      topic,
      messages: [
        { key: 's1', value: Buffer.from('{"not":"avro"}') },
        { key: 's1', value: writeWireFrame(987_654_321, Buffer.from([2, 3])) },
      ],
    });
    // A producer that skips validation (ours refuses this event before sending it).
    const careless = { ...codec, validate: undefined };
    await publisher.publish(careless, [event('invalid: empty id', ''), event('second good')]);

    const handled: string[] = [];
    const groupId = uniqueName('group');
    const consumer = new ReliableConsumer(kafka, registry, deadLetters, {
      groupId,
      retry: { initialMs: 50, maxMs: 500 },
    }).subscribe(codec, (items) => {
      handled.push(...items.map((item) => item.event.text));
    });
    await consumer.start();
    await eventually(() => (handled.length >= 2 ? true : undefined));
    const dead = await readCommitted(kafka, deadLetterTopic(topic), 3);
    await eventually(async () =>
      (await committedOffset(kafka, groupId, topic)) === 5 ? true : undefined,
    );
    await consumer.stop();

    expect(handled).toEqual(['first good', 'second good']);
    const header = (i: number, name: string) => dead[i].headers?.[name]?.toString();
    expect(dead.map((_, i) => header(i, DLQ_HEADERS.errorClass))).toEqual([
      'DecodeError',
      'SchemaNotFoundError',
      'InvalidEventError',
    ]);
    expect(dead.map((_, i) => header(i, DLQ_HEADERS.sourceOffset))).toEqual(['1', '2', '3']);
    expect(header(0, DLQ_HEADERS.sourceTopic)).toBe(topic);
    expect(header(0, DLQ_HEADERS.sourcePartition)).toBe('0');
    expect(header(0, DLQ_HEADERS.service)).toBe('it-service');
    expect(header(2, DLQ_HEADERS.errorMessage)).toContain('eventId is empty');
    expect(Number.isNaN(Date.parse(header(0, DLQ_HEADERS.time) ?? ''))).toBe(false);
    expect(dead[0].value?.toString()).toBe('{"not":"avro"}');
  });

  it('should pause and retry a failing sink without skipping or reordering anything', async () => {
    const topic = uniqueName('it.retry');
    const codec = scratchCodec(topic);
    await ensureTopics(kafka, [{ topic, partitions: 1 }]);
    await publisher.publish(
      codec,
      ['a', 'b', 'c', 'd'].map((text) => event(text)),
    );

    const stored: string[] = [];
    let outages = 3;
    const consumer = new ReliableConsumer(kafka, registry, deadLetters, {
      groupId: uniqueName('group'),
      retry: { initialMs: 50, maxMs: 200 },
    }).subscribe(codec, (items) => {
      for (const item of items) {
        if (item.event.text === 'c' && outages > 0) {
          outages -= 1;
          throw new DownstreamUnavailableError('sink is down');
        }
        if (!stored.includes(item.event.text)) stored.push(item.event.text);
      }
    });
    await consumer.start();
    await eventually(() => (stored.length >= 4 ? true : undefined));
    await consumer.stop();

    expect(stored).toEqual(['a', 'b', 'c', 'd']);
    expect(consumer.counters.retries).toBeGreaterThanOrEqual(3);
    expect(consumer.counters.deadLettered).toBe(0);
  });
});
