import {
  LlmContinuityAssessorClient,
  OpenAiCompatibleChatClient,
  SharedEmbedder,
  type Embedder,
} from '@engram/ai';
import {
  DISTILLER_LLM,
  ENGRAM_CONFIG,
  SERVICE_TIMERS,
  STREAM_PLATFORM,
  type EngramConfig,
  type ServiceTimers,
} from '@engram/config';
import { prefixedTopicNames, type StreamPlatform } from '@engram/core';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DEFAULT_SEGMENTER_TOPICS, type SegmenterTopics } from './segmenter.stage';
import { startSegmenter, type RunningSegmenter } from './segmenter.topology';

/** The segmenter's topics under the configured prefix. */
export function prefixedTopics(prefix: string): SegmenterTopics {
  return prefixedTopicNames(DEFAULT_SEGMENTER_TOPICS, prefix);
}

/** With an LLM configured, new threads are also judged by it (seed 004 §2.3), 10 s at most. */
export function continuityAssessorOf(
  llm: EngramConfig['llm'],
): LlmContinuityAssessorClient | undefined {
  return llm
    ? new LlmContinuityAssessorClient(
        new OpenAiCompatibleChatClient({ ...llm, timeoutMs: 10_000, maxAttempts: 2 }),
      )
    : undefined;
}

/** Hybrid segmentation's embedding call: the prompts' vectors as plain arrays (the changelog is JSON). */
export function promptEmbedderOf(embedder: Embedder): (texts: string[]) => Promise<number[][]> {
  return async (texts) => (await embedder.embed(texts)).map((vector) => Array.from(vector));
}

/**
 * Runs the segmenter for the life of the Nest application on the mode's providers (issue #18:
 * STREAM_PLATFORM, SharedEmbedder, DISTILLER_LLM — Kafka distributed, the SQLite log embedded);
 * stops it (drain, commit) before the providers close (beforeApplicationShutdown).
 */
@Injectable()
export class SegmenterService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SegmenterService.name);
  private runtime?: RunningSegmenter;

  constructor(
    @Inject(STREAM_PLATFORM) private readonly platform: StreamPlatform,
    private readonly embedders: SharedEmbedder,
    @Inject(DISTILLER_LLM) private readonly llm: EngramConfig['llm'],
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
    @Optional() @Inject(SERVICE_TIMERS) private readonly timers: ServiceTimers | null,
  ) {}

  /** The running segmenter (after bootstrap, until shutdown). */
  get running(): RunningSegmenter | undefined {
    return this.runtime;
  }

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    const mode = config.segmenter.mode;
    // Hybrid mode embeds every user prompt with the mode's embedder: distributed, the local model
    // (a missing one stops start-up with `npm run models:setup` in the message); embedded, none
    // without it, and hybrid's learned rule decides on its lexical features alone (said here).
    const embedder = mode === 'hybrid' ? await this.embedders.get() : null;
    if (embedder?.dims === 0) {
      this.logger.warn(
        'the embedding model is missing: hybrid segmentation decides on keywords, episode length and gaps alone',
      );
    }
    const assessor = continuityAssessorOf(this.llm);
    this.runtime = await startSegmenter({
      platform: this.platform,
      settings: { ...config.segmenter.settings, mode },
      topics: prefixedTopics(config.topicPrefix),
      groupId: config.topicPrefix + config.segmenter.groupId,
      instanceId: config.segmenter.instanceId,
      partitions: config.inputs.partitions,
      retry: config.retry,
      sweepIntervalMs: this.timers?.sweepIntervalMs ?? config.segmenter.sweepIntervalMs,
      ...(assessor && { assessor }),
      ...(embedder && embedder.dims > 0 && { embed: promptEmbedderOf(embedder) }),
    });
    this.logger.log(`segmenter running (group ${config.topicPrefix + config.segmenter.groupId})`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
    this.runtime = undefined;
  }
}

/** The segmenter; the root module imports the mode's providers (global modules). */
@Module({ providers: [SegmenterService] })
export class SegmenterModule {}
