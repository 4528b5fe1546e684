import { ConfigModule, ENGRAM_CONFIG, grpcTokensOf, type EngramConfig } from '@engram/config';
import { KafkaPlatformModule, SharedKafkaPlatform } from '@engram/kafka';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { prefixedDistillerTopics } from './distiller-topics';
import {
  DEFAULT_DISTILLER_GROUP,
  startDistiller,
  type RunningDistiller,
} from './distiller.topology';
import { startDistillerReview, type ReviewServer } from './review/review.server';

/**
 * Runs the distiller (distillation, the memory merge, episode summaries, the reflector) on Kafka
 * for the life of the Nest application (distributed mode; embedded mode runs the same topology on
 * the SQLite log), and serves the review API (engram.review.v1) beside it; stops both (drain,
 * commit) on shutdown.
 */
@Injectable()
export class DistillerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DistillerService.name);
  private runtime?: RunningDistiller;
  private review?: ReviewServer;
  /** Whether this service holds the shared platform (acquired, not yet released). */
  private holdsPlatform = false;

  constructor(
    private readonly platforms: SharedKafkaPlatform,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // Read first: a bad tokens file stops start-up before anything connects.
    const tokens = grpcTokensOf(config);
    // Shared settings: the topic prefix, the servers, the retry policy, the partition count of
    // the co-partitioned inputs and the LLM endpoint (ENGRAM_LLM_*; without one it distils and
    // reflects extractively); its own: the review API's address and the reflection hour.
    const groupId = config.topicPrefix + DEFAULT_DISTILLER_GROUP;
    const topics = prefixedDistillerTopics(config.topicPrefix);
    const platform = await this.platforms.acquire();
    this.holdsPlatform = true;
    try {
      this.runtime = await startDistiller({
        platform,
        topics,
        groupId,
        partitions: config.inputs.partitions,
        retry: config.retry,
        llm: config.llm,
        settings: { ...config.distiller, prompts: config.segmenter.settings },
        reflector: { scheduledHourUtc: config.distiller.reflectionHourUtc },
      });
      this.review = await startDistillerReview(platform, topics, {
        url: config.distiller.reviewGrpcUrl,
        tokens,
      });
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.logger.log(`distiller running (group ${groupId}), review API on ${this.review.url}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** The review server, then the processor (drain, commit); the platform is released last. */
  private async stop(): Promise<void> {
    await this.review?.stop();
    this.review = undefined;
    await this.runtime?.stop();
    this.runtime = undefined;
    if (!this.holdsPlatform) return;
    this.holdsPlatform = false;
    await this.platforms.release();
  }
}

@Module({
  imports: [ConfigModule, KafkaPlatformModule],
  providers: [DistillerService],
})
export class DistillerModule {}
