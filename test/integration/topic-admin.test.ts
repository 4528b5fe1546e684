import { deadLetterTopic, ensureTopics, type TopicSpec } from '@engram/kafka';
import { describe, expect, it } from 'vitest';
import { testKafka } from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

/**
 * Rounds of services starting together, each creating its topics. Before the fix, kafkajs'
 * waitForLeaders failed on KRaft's transient UNKNOWN_TOPIC_OR_PARTITION in about half of such
 * concurrent creations (and once in a CI run, a lone one under load).
 */
const ROUNDS = 8;
const SERVICES = 4;

describe('ensureTopics on real Kafka', () => {
  const kafka = testKafka();

  it('should return only once every partition of every new topic has a leader', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      for (let round = 0; round < ROUNDS; round += 1) {
        const services: TopicSpec[][] = Array.from({ length: SERVICES }, (_, service) =>
          [1, 2, 3, 4].map((n) => ({
            topic: uniqueName(`it.topics-${round}-${service}-${n}`),
            partitions: n,
          })),
        );
        await Promise.all(services.map((specs) => ensureTopics(kafka, specs)));
        const specs = services.flat();

        const topics = specs.flatMap((s) => [s.topic, deadLetterTopic(s.topic)]);
        const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
        const partitions = Object.fromEntries(
          metadata.map((t) => [t.name, t.partitions.filter((p) => p.leader >= 0).length]),
        );
        expect(partitions).toEqual(
          Object.fromEntries(
            specs.flatMap((s) => [
              [s.topic, s.partitions],
              [deadLetterTopic(s.topic), 1],
            ]),
          ),
        );
      }
    } finally {
      await admin.disconnect();
    }
  });

  it('should leave existing topics alone and return at once', async () => {
    const topic = uniqueName('it.topics-again');
    await ensureTopics(kafka, [{ topic, partitions: 2 }]);
    await ensureTopics(kafka, [{ topic, partitions: 5 }]);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(topics[0].partitions).toHaveLength(2);
    } finally {
      await admin.disconnect();
    }
  });
});
