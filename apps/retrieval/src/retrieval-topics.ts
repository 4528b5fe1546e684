import { TOPICS } from '@engram/contracts';
import { prefixedTopicNames } from '@engram/core';

/** The topics the indexer reads (SPEC §2: retrieval ◄── memories, episodes; and user prompts). */
export interface RetrievalTopics {
  /** `memory.memories.v1` (compacted; a tombstone deletes the memory). */
  memories: string;
  /** `memory.episodes.v1` (compacted; a tombstone deletes the episode). */
  episodes: string;
  /** `agent.prompts.v1` (user prompts become turns). */
  prompts: string;
  /** `agent.tool-calls.v1` (distributed mode: the tool-call index of the friction report). */
  toolCalls: string;
}

export const DEFAULT_RETRIEVAL_TOPICS: RetrievalTopics = {
  memories: TOPICS.memories.topic,
  episodes: TOPICS.episodes.topic,
  prompts: TOPICS.prompts.topic,
  toolCalls: TOPICS.toolCalls.topic,
};

/** The topics under the configured prefix (ENGRAM_TOPIC_PREFIX; tests use their own). */
export function prefixedRetrievalTopics(prefix: string): RetrievalTopics {
  return prefixedTopicNames(DEFAULT_RETRIEVAL_TOPICS, prefix);
}
