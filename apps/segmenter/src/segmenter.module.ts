import {
  EmbedderModule,
  LlmContinuityAssessorClient,
  OpenAiCompatibleChatClient,
  SharedEmbedder,
  type Embedder,
} from '@engram/ai';
import { ConfigModule, ENGRAM_CONFIG, type EngramConfig } from '@engram/config';
import { KafkaPlatformModule, SharedKafkaPlatform } from '@engram/kafka';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DEFAULT_SEGMENTER_TOPICS, type SegmenterTopics } from './segmenter.stage';
import { startSegmenter, type RunningSegmenter } from './segmenter.topology';

/** The segmenter's topics under the configured prefix. */
export function prefixedTopics(prefix: string): SegmenterTopics {
  const d = DEFAULT_SEGMENTER_TOPICS;
  return {
    prompts: prefix + d.prompts,
    toolCalls: prefix + d.toolCalls,
    lifecycle: prefix + d.lifecycle,
    boundaries: prefix + d.boundaries,
    episodes: prefix + d.episodes,
    threadLinks: prefix + d.threadLinks,
    changelog: prefix + d.changelog,
  };
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
 * Runs the segmenter on Kafka for the life of the Nest application (distributed mode; embedded
 * mode runs the same topology on the SQLite log); stops it (drain, commit) on shutdown.
 */
@Injectable()
export class SegmenterService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SegmenterService.name);
  private runtime?: RunningSegmenter;

  constructor(
    private readonly platforms: SharedKafkaPlatform,
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // Hybrid mode embeds every user prompt with the local model (`npm run models:setup`);
    // a missing model stops start-up with that command in the message.
    const embedder = config.segmenter.mode === 'hybrid' ? await this.embedders.get() : null;
    const assessor = continuityAssessorOf(config.llm);
    const platform = await this.platforms.acquire();
    try {
      this.runtime = await startSegmenter({
        platform,
        settings: config.segmenter.settings,
        topics: prefixedTopics(config.topicPrefix),
        groupId: config.topicPrefix + config.segmenter.groupId,
        instanceId: config.segmenter.instanceId,
        partitions: config.inputs.partitions,
        retry: config.retry,
        sweepIntervalMs: config.segmenter.sweepIntervalMs,
        ...(assessor && { assessor }),
        ...(embedder && { embed: promptEmbedderOf(embedder) }),
      });
    } catch (error) {
      await this.platforms.release();
      throw error;
    }
    this.logger.log(`segmenter running (group ${config.topicPrefix + config.segmenter.groupId})`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.runtime) return;
    await this.runtime.stop();
    this.runtime = undefined;
    await this.platforms.release();
  }
}

@Module({
  imports: [ConfigModule, EmbedderModule, KafkaPlatformModule],
  providers: [SegmenterService],
})
export class SegmenterModule {}
