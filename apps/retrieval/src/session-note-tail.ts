import type { Embedder } from '@engram/ai';
import { TOPICS } from '@engram/contracts';
import {
  codecOnTopic,
  contractCodec,
  DEFAULT_SESSION_NOTE_LIMITS,
  errorMessage,
  SessionNoteView,
  type SessionNoteStore,
  type StreamPlatform,
  type TopicTail,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { embedNoteTextsWith } from './note-embeddings';

/** Where a recall server reads the lifecycle events its session notes are a view of. */
export interface LifecycleSource {
  /** Kafka (distributed) or the SQLite log (embedded): the one the services run on. */
  platform: StreamPlatform;
  /** ENGRAM_TOPIC_PREFIX: the tail reads `<prefix>agent.lifecycle.v1`. */
  topicPrefix: string;
  /** Partitions the topic is created with when missing (EngramConfig.inputs.partitions). */
  partitions: number;
}

export interface SessionNoteTailOptions extends LifecycleSource {
  /** The recall stack's pad (the one Remember holds notes in and Recall reads). */
  notes: SessionNoteStore;
  /** The recall server's model (null or absent: notes read from the log match lexically only). */
  embedder?: Embedder | null;
  /** How far back the log is read: the notes' idle expiry (older notes have expired anyway). */
  idleExpiryMs?: number;
  clock?: () => number;
}

/**
 * The session notes as a view of agent.lifecycle.v1 (SessionNoteView): a tail of every partition
 * from (now − the idle expiry), no consumer group, so every recall server — a restarted one, each
 * replica — holds the notes of every session and ends them at SessionEnded. Started once reading
 * has begun; it catches up in the background (Remember's own hold covers its own notes meanwhile).
 */
export async function startSessionNoteTail(options: SessionNoteTailOptions): Promise<TopicTail> {
  const clock = options.clock ?? Date.now;
  const idleExpiryMs = options.idleExpiryMs ?? DEFAULT_SESSION_NOTE_LIMITS.idleExpiryMs;
  const topic = options.topicPrefix + TOPICS.lifecycle.topic;
  const logger = new Logger('SessionNotes');
  await options.platform.ensureTopics([{ topic }], options.partitions);
  const view = new SessionNoteView({
    notes: options.notes,
    embed: embedNoteTextsWith(options.embedder),
    idleExpiryMs,
    clock,
    warn: (message) => logger.warn(message),
  });
  const tail = await options.platform.createTail({
    codec: codecOnTopic(contractCodec('agent.lifecycle.v1'), topic),
    fromTimestamp: clock() - idleExpiryMs,
    handle: async (items) => {
      await view.apply(items.map((item) => item.event));
    },
    onSkipped: ({ partition, offset, error }) =>
      logger.warn(`${topic}[${partition}]@${offset} passed over: ${errorMessage(error)}`),
  });
  await tail.start();
  logger.log(
    `session notes follow ${topic} from ${new Date(clock() - idleExpiryMs).toISOString()}`,
  );
  return tail;
}
