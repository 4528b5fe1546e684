import {
  AvroRegistry,
  createKafka,
  DeadLetterWriter,
  KafkaStreamPlatform,
  ReliableConsumer,
  valueSubject,
  type TopicCodec,
} from '@engram/kafka';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { inject } from 'vitest';
import { eventually, uniqueName } from './unique';

export interface ScratchEvent {
  eventId: string;
  sessionId: string;
  text: string;
}

export const SCRATCH_SCHEMA = {
  type: 'record',
  name: 'ScratchEvent',
  namespace: 'engram.test',
  fields: [
    { name: 'eventId', type: 'string' },
    { name: 'sessionId', type: 'string' },
    { name: 'text', type: 'string' },
  ],
};

/** A codec for a scratch topic of this test, validating like the real contracts do. */
export function scratchCodec(topic: string): TopicCodec<ScratchEvent> {
  return {
    topic,
    subject: valueSubject(topic),
    schema: SCRATCH_SCHEMA,
    toAvro: (event) => event,
    fromAvro: (value) => value as ScratchEvent,
    key: (event) => event.sessionId,
    validate: (event) => (event.eventId.length === 0 ? ['eventId is empty'] : []),
  };
}

export function testKafka(): Kafka {
  return createKafka({ brokers: inject('infra').kafkaBrokers, clientId: uniqueName('test') });
}

/** The distributed stream platform on the test servers; whoever connects it closes it. */
export function testPlatform(): Promise<KafkaStreamPlatform> {
  const infra = inject('infra');
  return KafkaStreamPlatform.connect({
    brokers: infra.kafkaBrokers,
    registryUrl: infra.registryUrl,
    clientId: uniqueName('test'),
  });
}

/** Runs `use` on a test platform, closed afterwards. */
export async function withTestPlatform<T>(
  use: (platform: KafkaStreamPlatform) => Promise<T>,
): Promise<T> {
  const platform = await testPlatform();
  try {
    return await use(platform);
  } finally {
    await platform.close();
  }
}

export function testRegistry(): AvroRegistry {
  return new AvroRegistry(inject('infra').registryUrl);
}

/** Reads a topic from the start as a read_committed consumer until `count` records arrived. */
export async function readCommitted(
  kafka: Kafka,
  topic: string,
  count: number,
  timeoutMs = 60_000,
): Promise<KafkaMessage[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('reader'), readUncommitted: false });
  const seen: KafkaMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${seen.length}/${count} records on ${topic}`)),
        timeoutMs,
      );
      void consumer.run({
        eachMessage: ({ message }) => {
          seen.push(message);
          if (seen.length >= count) {
            clearTimeout(timer);
            resolve();
          }
          return Promise.resolve();
        },
      });
    });
    return seen;
  } finally {
    await consumer.disconnect();
  }
}

/** Number of records currently in a topic (sum of high watermarks of all partitions). */
export async function topicSize(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads every committed record of a topic: waits for at least `atLeast`, then until nothing new
 * arrived for `idleMs` — so duplicates, which would arrive late, are counted too.
 */
export async function readAllCommitted(
  kafka: Kafka,
  topic: string,
  atLeast: number,
  idleMs = 3_000,
): Promise<KafkaMessage[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('reader'), readUncommitted: false });
  const seen: KafkaMessage[] = [];
  let lastArrival = Date.now();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        seen.push(message);
        lastArrival = Date.now();
        return Promise.resolve();
      },
    });
    const deadline = Date.now() + 60_000;
    while (seen.length < atLeast || Date.now() - lastArrival < idleMs) {
      if (Date.now() > deadline) {
        throw new Error(`only ${seen.length}/${atLeast} records on ${topic}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return seen;
  } finally {
    await consumer.disconnect();
  }
}

/** Consumes `codec.topic` from the start through a ReliableConsumer until `count` events arrived. */
export async function consumeEvents<E>(
  kafka: Kafka,
  codec: TopicCodec<E>,
  count: number,
): Promise<E[]> {
  const received: E[] = [];
  const deadLetters = new DeadLetterWriter(kafka, 'it');
  await deadLetters.connect();
  const consumer = new ReliableConsumer(kafka, testRegistry(), deadLetters, {
    groupId: uniqueName('group'),
    retry: { initialMs: 50, maxMs: 500 },
  }).subscribe(codec, (items) => {
    received.push(...items.map((item) => item.event));
  });
  await consumer.start();
  try {
    await eventually(() => (received.length >= count ? true : undefined));
  } finally {
    await consumer.stop();
    await deadLetters.disconnect();
  }
  return received;
}
