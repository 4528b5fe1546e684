import { deadLetterId, isDeadLetterTopic, type DeadLetterRecord } from '@engram/core';
import { reliableProducerConfig, type AvroRegistry } from '@engram/kafka';
import { randomUUID } from 'node:crypto';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { REDRIVEN_TOPIC, type DeadLetterStore } from './dead-letters';

// The dead letters of Kafka (`engram dlq --distributed`, `engram replay --wait --distributed`):
// every `<prefix>….dlq` topic, read from the start by a throwaway consumer group (dead-letter
// topics are small), Avro payloads decoded through the registry for show, redriven with a
// producer to the source topic and recorded in `<prefix>engram.dlq.redriven` (compacted).

/** How long one read of the dead-letter topics may take. */
const READ_TIMEOUT_MS = 30_000;

export async function kafkaDeadLetters(
  kafka: Kafka,
  registry: AvroRegistry,
  topicPrefix: string,
): Promise<DeadLetterStore> {
  const admin: Admin = kafka.admin();
  await admin.connect();
  let producer: Producer | null = null;
  const markers = topicPrefix + REDRIVEN_TOPIC;
  const cache = new Map<string, DeadLetterRecord[]>();

  const ends = async (topics: readonly string[]) => {
    const result = new Map<string, number[]>();
    for (const topic of topics) {
      const offsets = await admin.fetchTopicOffsets(topic);
      const byPartition: number[] = [];
      for (const { partition, high } of offsets) byPartition[partition] = Number(high);
      result.set(topic, byPartition);
    }
    return result;
  };

  /** Every record of the topics up to their current ends (a fresh group, nothing committed). */
  const readAll = async (topics: readonly string[], raw = false) => {
    const wanted = [...(await ends(topics))].filter(([, e]) => e.some((end) => end > 0));
    const out = new Map<string, DeadLetterRecord[]>(topics.map((topic) => [topic, []]));
    if (wanted.length === 0) return out;
    const remaining = new Map<string, number>();
    for (const [topic, topicEnds] of wanted) {
      topicEnds.forEach((end, partition) => {
        if (end > 0) remaining.set(`${topic}:${partition}`, end);
      });
    }
    const groupId = `engram-dlq-${randomUUID()}`;
    const consumer = kafka.consumer({ groupId });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: wanted.map(([topic]) => topic), fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`reading ${wanted.length} dead-letter topic(s) took over 30 s`)),
          READ_TIMEOUT_MS,
        );
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              for (const message of batch.messages) {
                const offset = Number(message.offset);
                const headers: Record<string, string> = {};
                for (const [name, value] of Object.entries(message.headers ?? {})) {
                  if (value !== undefined) headers[name] = String(value);
                }
                out.get(batch.topic)!.push({
                  topic: batch.topic,
                  partition: batch.partition,
                  offset,
                  key: message.key === null ? null : message.key.toString('utf8'),
                  value: raw ? message.value : await readable(registry, message.value),
                  headers,
                  timestamp: Number(message.timestamp),
                });
                const key = `${batch.topic}:${batch.partition}`;
                if (offset + 1 >= (remaining.get(key) ?? 0)) remaining.delete(key);
              }
              if (remaining.size === 0) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
    for (const records of out.values()) records.sort((a, b) => a.offset - b.offset);
    return out;
  };

  const dlqTopics = async () =>
    (await admin.listTopics()).filter(
      (topic) => isDeadLetterTopic(topic) && topic.startsWith(topicPrefix),
    );

  const redriven = async () => {
    if (!(await admin.listTopics()).includes(markers)) return new Set<string>();
    const records = (await readAll([markers])).get(markers) ?? [];
    return new Set(records.flatMap((record) => (record.key ? [record.key] : [])));
  };

  return {
    ends: async () => ends(await dlqTopics()),
    async read(topic, partition, from, max) {
      let records = cache.get(topic);
      if (!records) cache.set(topic, (records = (await readAll([topic])).get(topic) ?? []));
      return records
        .filter((record) => record.partition === partition && record.offset >= from)
        .slice(0, max);
    },
    redriven,
    async redrive(record, to) {
      const id = deadLetterId(record);
      if ((await redriven()).has(id)) return 'already';
      // The bytes as they were dead-lettered (the cache holds decoded text for show).
      const [original] = ((await readAll([record.topic], true)).get(record.topic) ?? []).filter(
        (candidate) =>
          candidate.partition === record.partition && candidate.offset === record.offset,
      );
      if (!original) throw new Error(`dead letter ${id} is gone (retention?)`);
      await admin.createTopics({
        topics: [
          {
            topic: markers,
            numPartitions: 1,
            configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
          },
        ],
      });
      producer ??= kafka.producer(reliableProducerConfig());
      await producer.connect();
      await producer.send({
        topic: to,
        messages: [{ key: original.key, value: original.value }],
      });
      await producer.send({
        topic: markers,
        messages: [{ key: id, value: JSON.stringify({ id, to, at: new Date().toISOString() }) }],
      });
      return 'redriven';
    },
    async close() {
      if (producer) await producer.disconnect();
      await admin.disconnect();
    },
  };
}

/** A dead letter's value for people: Avro (registry wire format) as JSON text, else as it is. */
async function readable(
  registry: AvroRegistry,
  value: Buffer | null,
): Promise<string | Buffer | null> {
  if (value === null || value.length < 5 || value[0] !== 0) return value;
  try {
    return JSON.stringify(await registry.decode<unknown>(value), (_, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v,
    );
  } catch {
    return value;
  }
}
