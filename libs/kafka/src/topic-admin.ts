import type { Kafka } from 'kafkajs';
import { deadLetterTopic } from './dead-letter';

export interface TopicSpec {
  topic: string;
  partitions?: number;
  compacted?: boolean;
  /** Also create `<topic>.dlq` (default true). */
  withDeadLetter?: boolean;
}

/**
 * Creates topics (and their DLQs) if missing. Idempotent: existing topics are left alone, so it is
 * safe at every service start.
 */
export async function ensureTopics(
  kafka: Kafka,
  specs: TopicSpec[],
  replicationFactor = 1,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const wanted = specs.flatMap((spec) => [
      {
        topic: spec.topic,
        numPartitions: spec.partitions ?? 3,
        compacted: spec.compacted ?? false,
      },
      ...(spec.withDeadLetter === false
        ? []
        : [{ topic: deadLetterTopic(spec.topic), numPartitions: 1, compacted: false }]),
    ]);
    const missing = wanted.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({
        topic: t.topic,
        numPartitions: t.numPartitions,
        replicationFactor,
        configEntries: t.compacted ? [{ name: 'cleanup.policy', value: 'compact' }] : [],
      })),
    });
  } finally {
    await admin.disconnect();
  }
}
