import type { Admin, Kafka } from 'kafkajs';
import { deadLetterTopic } from './dead-letter';

export interface TopicSpec {
  topic: string;
  partitions?: number;
  compacted?: boolean;
  /** Also create `<topic>.dlq` (default true). */
  withDeadLetter?: boolean;
}

/** How long `ensureTopics` waits for every partition of a new topic to have a leader. */
const LEADER_WAIT_MS = 30_000;
const LEADER_POLL_MS = 100;

/**
 * Metadata errors a KRaft broker answers for a topic it has just created, until its metadata
 * image has caught up (KAFKA-15780): the topic is coming, not missing.
 */
const SETTLING_ERRORS = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

/**
 * Creates topics (and their DLQs) if missing. Idempotent: existing topics are left alone, so it is
 * safe at every service start. Returns once every partition of every topic has a leader.
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
    // kafkajs' own waitForLeaders gives up on the first UNKNOWN_TOPIC_OR_PARTITION, which a KRaft
    // broker answers for a moment after creating a topic; so we wait ourselves.
    await admin.createTopics({
      waitForLeaders: false,
      topics: missing.map((t) => ({
        topic: t.topic,
        numPartitions: t.numPartitions,
        replicationFactor,
        configEntries: t.compacted ? [{ name: 'cleanup.policy', value: 'compact' }] : [],
      })),
    });
    await waitForLeaders(
      admin,
      missing.map((t) => t.topic),
    );
  } finally {
    await admin.disconnect();
  }
}

/** Polls topic metadata until every partition of `topics` has a leader. */
export async function waitForLeaders(
  admin: Pick<Admin, 'fetchTopicMetadata'>,
  topics: string[],
  { timeoutMs = LEADER_WAIT_MS, pollMs = LEADER_POLL_MS } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waitingFor = await topicsWithoutLeaders(admin, topics);
    if (waitingFor === null) return;
    if (Date.now() >= deadline) {
      throw new Error(
        `topics still without partition leaders after ${timeoutMs} ms: ${waitingFor}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** null when all have leaders; otherwise what is still missing, for the timeout error. */
async function topicsWithoutLeaders(
  admin: Pick<Admin, 'fetchTopicMetadata'>,
  topics: string[],
): Promise<string | null> {
  try {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
    const leaderless = metadata
      .filter(
        (t) =>
          t.partitions.length === 0 ||
          t.partitions.some((p) => p.leader < 0 || p.partitionErrorCode !== 0),
      )
      .map((t) => t.name);
    return leaderless.length === 0 ? null : leaderless.join(', ');
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    if (typeof type === 'string' && SETTLING_ERRORS.has(type)) {
      return `${type} (${topics.join(', ')})`;
    }
    throw error;
  }
}
