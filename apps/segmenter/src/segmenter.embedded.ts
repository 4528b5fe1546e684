import {
  errorMessage,
  redactSecrets,
  startSweepTimer,
  type LlmContinuityAssessor,
  type SegmenterSettings,
} from '@engram/core';
import { EmbeddedExactlyOnceProcessor, type SqliteEventLog } from '@engram/embedded';
import { Logger } from '@nestjs/common';
import { segmenterCodecs } from './segmenter.runtime';
import {
  DEFAULT_SEGMENTER_TOPICS,
  SegmenterStage,
  type EmbedTexts,
  type InputPositions,
  type SegmenterTopics,
} from './segmenter.stage';

export interface EmbeddedSegmenterOptions {
  log: SqliteEventLog;
  settings: SegmenterSettings;
  topics?: SegmenterTopics;
  groupId?: string;
  partitions?: number;
  sweepIntervalMs?: number;
  retry?: { initialMs: number; maxMs: number };
  embed?: EmbedTexts;
  assessor?: LlmContinuityAssessor;
}

export interface EmbeddedSegmenter {
  stage: SegmenterStage;
  processor: EmbeddedExactlyOnceProcessor;
  groupId: string;
  /** The topics it consumes: `replay --wait` waits for this group's offsets on them. */
  inputs: string[];
  stop(): Promise<void>;
}

/** Creates the segmenter's topics on the embedded log (idempotent; same layout as on Kafka). */
export function ensureEmbeddedSegmenterTopics(
  log: SqliteEventLog,
  topics: SegmenterTopics,
  partitions: number,
): void {
  for (const topic of [topics.prompts, topics.toolCalls, topics.lifecycle, topics.boundaries]) {
    log.ensureTopic(topic, partitions, { withDeadLetter: true });
  }
  for (const topic of [topics.episodes, topics.threadLinks]) {
    log.ensureTopic(topic, partitions, { compacted: true, withDeadLetter: true });
  }
  log.ensureTopic(topics.changelog, partitions, { compacted: true });
}

/**
 * The segmenter on the embedded SQLite log (SPEC §2): the same stage as on Kafka, its changelog
 * and outputs in the same SQLite transaction as its offsets, and the same idle-episode timer.
 */
export async function startEmbeddedSegmenter(
  options: EmbeddedSegmenterOptions,
): Promise<EmbeddedSegmenter> {
  const logger = new Logger('Segmenter');
  const { log } = options;
  const topics = options.topics ?? DEFAULT_SEGMENTER_TOPICS;
  const groupId = options.groupId ?? 'engram-segmenter';
  ensureEmbeddedSegmenterTopics(log, topics, options.partitions ?? 3);
  const codecs = segmenterCodecs(topics);
  const stage = new SegmenterStage(
    topics,
    codecs,
    options.settings,
    (partitions) => Promise.resolve(log.latestByKey(topics.changelog, partitions)),
    (text) => redactSecrets(text).text,
    embeddedPositions(log, topics, groupId),
    options.embed,
    options.assessor ?? null,
  );
  const processor = new EmbeddedExactlyOnceProcessor(log, {
    groupId,
    service: 'segmenter',
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
    onAssignment: (assignment) => stage.onAssignment(assignment[topics.prompts] ?? []),
  })
    .subscribe(codecs.prompts, stage.promptStage)
    .subscribe(codecs.toolCalls, stage.toolCallStage)
    .subscribe(codecs.lifecycle, stage.lifecycleStage);
  await processor.start();

  const sweeper = startSweepTimer(processor, stage, options.sweepIntervalMs ?? 5_000, (error) =>
    logger.warn(`idle-episode sweep failed, will retry: ${errorMessage(error)}`),
  );

  return {
    stage,
    processor,
    groupId,
    inputs: [topics.prompts, topics.toolCalls, topics.lifecycle],
    async stop() {
      await sweeper.stop();
      await processor.stop();
    },
  };
}

function embeddedPositions(
  log: SqliteEventLog,
  topics: SegmenterTopics,
  groupId: string,
): InputPositions {
  return {
    endOffsets: (partition) =>
      Promise.resolve({
        prompts: log.endOffsets(topics.prompts)[partition] ?? 0,
        toolCalls: log.endOffsets(topics.toolCalls)[partition] ?? 0,
      }),
    committedOffsets: (partitions) => {
      const prompts = log.committedOffsets(groupId, topics.prompts);
      const toolCalls = log.committedOffsets(groupId, topics.toolCalls);
      return Promise.resolve(
        new Map(
          partitions.map((p) => [
            p,
            { prompts: prompts.get(p) ?? 0, toolCalls: toolCalls.get(p) ?? 0 },
          ]),
        ),
      );
    },
  };
}
