import {
  DISTILLER_LLM,
  ENGRAM_CONFIG,
  REVIEW_API,
  SERVICE_TIMERS,
  STREAM_PLATFORM,
  type EngramConfig,
  type ReviewApiAddress,
  type ServiceTimers,
} from '@engram/config';
import type { StreamPlatform } from '@engram/core';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { prefixedDistillerTopics } from './distiller-topics';
import {
  DEFAULT_DISTILLER_GROUP,
  startDistiller,
  type RunningDistiller,
} from './distiller.topology';
import { startDistillerReview, type ReviewServer } from './review/review.server';

/**
 * Runs the distiller (distillation, the memory merge, episode summaries, the reflector) for the
 * life of the Nest application on the mode's providers (issue #18: STREAM_PLATFORM, DISTILLER_LLM —
 * Kafka distributed, the SQLite log embedded), and serves the review API (engram.review.v1) beside
 * it at REVIEW_API (null: none); stops both (drain, commit) before the providers close
 * (beforeApplicationShutdown).
 */
@Injectable()
export class DistillerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DistillerService.name);
  private runtime?: RunningDistiller;
  private review?: ReviewServer;

  constructor(
    @Inject(STREAM_PLATFORM) private readonly platform: StreamPlatform,
    @Inject(DISTILLER_LLM) private readonly llm: EngramConfig['llm'],
    @Inject(REVIEW_API) private readonly reviewApi: ReviewApiAddress | null,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
    @Optional() @Inject(SERVICE_TIMERS) private readonly timers: ServiceTimers | null,
  ) {}

  /** The review server, once started (null: none served). */
  get reviewServer(): ReviewServer | null {
    return this.review ?? null;
  }

  /** The running distiller (after bootstrap, until shutdown). */
  get running(): RunningDistiller | undefined {
    return this.runtime;
  }

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // Shared settings: the topic prefix, the servers, the retry policy, the partition count of
    // the co-partitioned inputs and the LLM endpoint (without one it distils and reflects
    // extractively); its own: the review API's address and the reflection hour.
    const groupId = config.topicPrefix + DEFAULT_DISTILLER_GROUP;
    const topics = prefixedDistillerTopics(config.topicPrefix);
    try {
      this.runtime = await startDistiller({
        platform: this.platform,
        topics,
        groupId,
        partitions: config.inputs.partitions,
        retry: config.retry,
        ...(this.timers?.sweepIntervalMs !== undefined && {
          sweepIntervalMs: this.timers.sweepIntervalMs,
        }),
        llm: this.llm,
        settings: { ...config.distiller, prompts: config.segmenter.settings },
        reflector: {
          scheduledHourUtc: config.distiller.reflectionHourUtc,
          ...this.timers?.reflector,
        },
      });
      if (this.reviewApi) {
        this.review = await startDistillerReview(this.platform, topics, this.reviewApi);
      }
    } catch (error) {
      await this.beforeApplicationShutdown();
      throw error;
    }
    const review = this.review ? `, review API on ${this.review.url}` : '';
    this.logger.log(`distiller running (group ${groupId})${review}`);
  }

  /** The review server, then the processor (drain, commit). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.review?.stop();
    this.review = undefined;
    await this.runtime?.stop();
    this.runtime = undefined;
  }
}

/** The distiller; the root module imports the mode's providers (global modules). */
@Module({ providers: [DistillerService] })
export class DistillerModule {}
