import type { ServiceTopology, StreamPlatform } from '@engram/core';
import { codecOnTopic, contractCodec, prefixedTopicNames } from '@engram/core';
import {
  DEFAULT_DISTILLER_TOPICS,
  type DistillerCodecs,
  type DistillerTopics,
} from './distiller-stage-options';
import { narrativeCodec } from './episode-summary.stage';
import { reflectorWorkCodec } from './reflector/reflector-work';

// The distiller's topics, their codecs and their partition layout, on either platform.

export function distillerCodecs(topics: DistillerTopics): DistillerCodecs {
  return {
    prompts: codecOnTopic(contractCodec('agent.prompts.v1'), topics.prompts),
    toolCalls: codecOnTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
    lifecycle: codecOnTopic(contractCodec('agent.lifecycle.v1'), topics.lifecycle),
    boundaries: codecOnTopic(contractCodec('memory.episode-boundaries.v1'), topics.boundaries),
    memories: codecOnTopic(contractCodec('memory.memories.v1'), topics.memories),
    memoryCandidates: codecOnTopic(contractCodec('memory.memories.v1'), topics.memoryCandidates),
    episodes: codecOnTopic(contractCodec('memory.episodes.v1'), topics.episodes),
    narratives: narrativeCodec(topics.narratives),
    reflector: reflectorWorkCodec(topics.reflector),
    proposals: codecOnTopic(contractCodec('memory.proposals.v1'), topics.proposals),
  };
}

/** Prefixes every topic name (one cluster, several isolated installations or test runs). */
export function prefixedDistillerTopics(prefix: string): DistillerTopics {
  return prefixedTopicNames(DEFAULT_DISTILLER_TOPICS, prefix);
}

/**
 * The distiller's topics. The four inputs are keyed by sessionId (shared with the segmenter and
 * the observer, which may have created them) and share one partition count; the own topics are
 * created with it. Changelogs have no dead-letter topic.
 */
export function distillerTopics(topics: DistillerTopics): ServiceTopology['topics'] {
  return {
    inputs: [
      { topic: topics.prompts },
      { topic: topics.toolCalls },
      { topic: topics.lifecycle },
      { topic: topics.boundaries },
    ],
    own: [
      { topic: topics.memories, compacted: true },
      { topic: topics.changelog, compacted: true, withDeadLetter: false },
      { topic: topics.episodes, compacted: true },
      { topic: topics.narratives },
      { topic: topics.summaryChangelog, compacted: true, withDeadLetter: false },
      { topic: topics.reflector },
      { topic: topics.reflectorChangelog, compacted: true, withDeadLetter: false },
      { topic: topics.proposals, compacted: true },
      { topic: topics.memoryCandidates },
      { topic: topics.memoryMergeChangelog, compacted: true, withDeadLetter: false },
    ],
  };
}

/**
 * Topics that must have the partition count of another: a record keyed like the other topic's
 * lands in the same partition number. The narratives (keyed by episodeId) and the join's
 * changelog follow the episodes; each stage's changelog follows the topic that keys the stage.
 */
function partitionedLike(topics: DistillerTopics): { like: string; topics: string[] }[] {
  return [
    { like: topics.episodes, topics: [topics.narratives, topics.summaryChangelog] },
    { like: topics.reflector, topics: [topics.reflectorChangelog] },
    { like: topics.memoryCandidates, topics: [topics.memoryMergeChangelog] },
  ];
}

/**
 * Creates the distiller's topics (idempotent): the prompts topic with `partitions` when missing,
 * the other inputs with its count, the own topics with the inputs' count, the followers of
 * `partitionedLike` with their leader's count.
 * Refuses (MisconfigurationError, naming the counts) inputs that are not co-partitioned and a
 * follower that exists with another count than its leader. Returns the inputs' count.
 */
export async function ensureDistillerTopics(
  platform: StreamPlatform,
  topics: DistillerTopics,
  partitions: number,
): Promise<number> {
  const { inputs, own } = distillerTopics(topics);
  // Missing inputs take the prompts topic's count when it exists, so they stay co-partitioned
  // with it whatever `partitions` says.
  await platform.ensureTopics(inputs.slice(0, 1), partitions);
  await platform.ensureTopics(inputs, await platform.partitionCount([topics.prompts]));
  const count = await platform.partitionCount(inputs.map(({ topic }) => topic));
  const groups = partitionedLike(topics);
  const followers = new Set(groups.flatMap((group) => group.topics));
  await platform.ensureTopics(
    own.filter(({ topic }) => !followers.has(topic)),
    count,
  );
  for (const group of groups) {
    const leaderCount = await platform.partitionCount([group.like]);
    await platform.ensureTopics(
      own.filter(({ topic }) => group.topics.includes(topic)),
      leaderCount,
    );
    await platform.partitionCount([group.like, ...group.topics]);
  }
  return count;
}
