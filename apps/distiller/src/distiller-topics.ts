import { ensureTopics } from '@engram/kafka';
import type { Kafka } from 'kafkajs';
import type { DistillerTopics } from './distiller-stage-options';

// The distiller's topics on Kafka (the embedded log's are in distiller.embedded.ts).

/**
 * Creates the distiller's topics (idempotent). The inputs are shared with the segmenter and the
 * observer and may exist already; all four are keyed by sessionId and must have one partition
 * count, so a session's events, triggers and state share a partition number. The changelog takes
 * that count.
 */
export async function ensureDistillerTopics(
  kafka: Kafka,
  topics: DistillerTopics,
  partitions: number,
): Promise<number> {
  const inputs = [topics.prompts, topics.toolCalls, topics.lifecycle, topics.boundaries];
  await ensureTopics(kafka, [
    ...inputs.map((topic) => ({ topic, partitions })),
    { topic: topics.memories, partitions, compacted: true },
  ]);
  const counts = await partitionCounts(kafka, inputs);
  const count = counts.get(topics.prompts)!;
  if ([...counts.values()].some((n) => n !== count)) {
    const listed = [...counts].map(([name, n]) => `${name}: ${n}`).join(', ');
    throw new Error(
      `the distiller needs its inputs co-partitioned (one partition count, keyed by sessionId); ${listed}`,
    );
  }
  await ensureTopics(kafka, [
    { topic: topics.changelog, partitions: count, compacted: true, withDeadLetter: false },
    { topic: topics.episodes, partitions: count, compacted: true },
  ]);
  await ensureEpisodeJoinTopics(kafka, topics);
  await ensureReflectorTopics(kafka, topics, count);
  await ensureMemoryMergeTopics(kafka, topics, count);
  return count;
}

/**
 * The reflector's work topic (keyed by project) and its changelog share one partition count: a
 * project's state is written to the partition number of its work.
 */
async function ensureReflectorTopics(
  kafka: Kafka,
  topics: DistillerTopics,
  partitions: number,
): Promise<void> {
  await ensureTopics(kafka, [
    { topic: topics.reflector, partitions },
    { topic: topics.reflectorChangelog, partitions, compacted: true, withDeadLetter: false },
    { topic: topics.proposals, partitions, compacted: true },
  ]);
  const counts = await partitionCounts(kafka, [topics.reflector, topics.reflectorChangelog]);
  if (counts.get(topics.reflector) !== counts.get(topics.reflectorChangelog)) {
    throw new Error(
      `${topics.reflector} and ${topics.reflectorChangelog} need one partition count`,
    );
  }
}

/**
 * The narratives topic and the join's changelog take the episodes topic's partition count: a
 * narrative keyed by episodeId lands in the partition number of its episode.
 */
async function ensureEpisodeJoinTopics(kafka: Kafka, topics: DistillerTopics): Promise<void> {
  const counts = await partitionCounts(kafka, [topics.episodes]);
  const count = counts.get(topics.episodes)!;
  await ensureTopics(kafka, [
    { topic: topics.narratives, partitions: count },
    { topic: topics.summaryChangelog, partitions: count, compacted: true, withDeadLetter: false },
  ]);
  const joined = await partitionCounts(kafka, [topics.narratives, topics.summaryChangelog]);
  if ([...joined.values()].some((n) => n !== count)) {
    throw new Error(
      `${topics.narratives} and ${topics.summaryChangelog} need the ${count} partitions of ${topics.episodes}`,
    );
  }
}

async function partitionCounts(kafka: Kafka, names: string[]): Promise<Map<string, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    return new Map(topics.map((topic) => [topic.name, topic.partitions.length]));
  } finally {
    await admin.disconnect();
  }
}

/**
 * The memory candidates (keyed by memoryId) and the merge's changelog share one partition count:
 * a memory's joined state is written to the partition number of its candidates.
 */
async function ensureMemoryMergeTopics(
  kafka: Kafka,
  topics: DistillerTopics,
  partitions: number,
): Promise<void> {
  await ensureTopics(kafka, [
    { topic: topics.memoryCandidates, partitions },
    { topic: topics.memoryMergeChangelog, partitions, compacted: true, withDeadLetter: false },
  ]);
  const names = [topics.memoryCandidates, topics.memoryMergeChangelog];
  const counts = await partitionCounts(kafka, names);
  if (counts.get(names[0]) !== counts.get(names[1])) {
    throw new Error(`${names[0]} and ${names[1]} need one partition count`);
  }
}
