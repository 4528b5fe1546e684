import {
  codecOnTopic,
  contractCodec,
  inputPositionsOn,
  redactSecrets,
  runTopology,
  type LlmContinuityAssessor,
  type RunningTopology,
  type TopologyRunSettings,
  type SegmenterSettings,
  type ServiceTopology,
  type StreamPlatform,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import {
  DEFAULT_SEGMENTER_TOPICS,
  SegmenterStage,
  type EmbedTexts,
  type SegmenterCodecs,
  type SegmenterTopics,
} from './segmenter.stage';

export const DEFAULT_SEGMENTER_GROUP = 'engram-segmenter';

export interface SegmenterOptions extends TopologyRunSettings {
  /** Kafka (distributed) or the SQLite log (embedded): the only difference between the modes. */
  platform: StreamPlatform;
  settings: SegmenterSettings;
  topics?: SegmenterTopics;
  /** Consumer group; on Kafka also the prefix of the transactional id. */
  groupId?: string;
  /** How often the idle-episode timer runs. */
  sweepIntervalMs?: number;
  /** Hybrid mode: embeds prompt texts (absent: hybrid decides on its lexical features alone). */
  embed?: EmbedTexts;
  /** The optional LLM half of cross-thread linking. */
  assessor?: LlmContinuityAssessor;
}

export interface RunningSegmenter extends RunningTopology {
  stage: SegmenterStage;
}

export function segmenterCodecs(topics: SegmenterTopics): SegmenterCodecs {
  return {
    prompts: codecOnTopic(contractCodec('agent.prompts.v1'), topics.prompts),
    toolCalls: codecOnTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
    lifecycle: codecOnTopic(contractCodec('agent.lifecycle.v1'), topics.lifecycle),
    boundaries: codecOnTopic(contractCodec('memory.episode-boundaries.v1'), topics.boundaries),
    episodes: codecOnTopic(contractCodec('memory.episodes.v1'), topics.episodes),
    threadLinks: codecOnTopic(contractCodec('memory.thread-links.v1'), topics.threadLinks),
  };
}

/** The segmenter's topics: the agent inputs, its outputs and its changelog. */
export function segmenterTopics(topics: SegmenterTopics): ServiceTopology['topics'] {
  return {
    inputs: [{ topic: topics.prompts }, { topic: topics.toolCalls }, { topic: topics.lifecycle }],
    own: [
      { topic: topics.boundaries },
      { topic: topics.episodes, compacted: true },
      { topic: topics.threadLinks, compacted: true },
      { topic: topics.changelog, compacted: true, withDeadLetter: false },
    ],
  };
}

/** Creates the segmenter's topics (idempotent), e.g. before publishing to them. */
export async function ensureSegmenterTopics(
  platform: StreamPlatform,
  topics: SegmenterTopics,
  partitions: number,
): Promise<void> {
  const { inputs, own } = segmenterTopics(topics);
  await platform.ensureTopics([...inputs, ...own], partitions);
}

/**
 * The segmenter (SPEC §4) as one topology: prompts, tool calls and lifecycle events of a session
 * feed one stage (co-partitioned by session), which owns the prompts topic's partitions and
 * closes idle episodes on a timer.
 */
export function segmenterTopology(options: SegmenterOptions): {
  topology: ServiceTopology;
  stage: SegmenterStage;
} {
  const { platform } = options;
  const topics = options.topics ?? DEFAULT_SEGMENTER_TOPICS;
  const groupId = options.groupId ?? DEFAULT_SEGMENTER_GROUP;
  const codecs = segmenterCodecs(topics);
  const stage = new SegmenterStage(
    topics,
    codecs,
    options.settings,
    (partitions) => platform.readChangelog(topics.changelog, partitions),
    (text) => redactSecrets(text).text,
    inputPositionsOn(platform, groupId, { prompts: topics.prompts, toolCalls: topics.toolCalls }),
    options.embed,
    options.assessor ?? null,
  );
  const topology: ServiceTopology = {
    service: 'segmenter',
    groupId,
    topics: segmenterTopics(topics),
    bindings: [
      { codec: codecs.prompts, stage: stage.promptStage },
      { codec: codecs.toolCalls, stage: stage.toolCallStage },
      { codec: codecs.lifecycle, stage: stage.lifecycleStage },
    ],
    assignments: [{ topic: topics.prompts, assign: (owned) => stage.onAssignment(owned) }],
    timers: [{ name: 'idle-episode', stage, intervalMs: options.sweepIntervalMs ?? 5_000 }],
    waitOn: [topics.prompts, topics.toolCalls, topics.lifecycle],
    internal: [],
  };
  return { topology, stage };
}

/** Starts the segmenter on the platform; `stop` drains and commits (the platform stays open). */
export async function startSegmenter(options: SegmenterOptions): Promise<RunningSegmenter> {
  const logger = new Logger('Segmenter');
  const { topology, stage } = segmenterTopology(options);
  const running = await runTopology(options.platform, topology, options, (line) =>
    logger.warn(line),
  );
  return { ...running, stage };
}
