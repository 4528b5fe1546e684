import { ConfigModule, ENGRAM_CONFIG, grpcTokensOf, type EngramConfig } from '@engram/config';
import { AvroRegistry, KafkaEventLog } from '@engram/kafka';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  DEFAULT_DISTILLER_GROUP,
  distillerCodecs,
  prefixedDistillerTopics,
  startDistiller,
  type DistillerRuntime,
} from './distiller.runtime';
import { ReviewDesk } from './review/review-desk';
import { startReviewServer, type ReviewServer } from './review/review.server';

/**
 * Runs the distiller (distillation, the memory merge, episode summaries, the reflector) for the
 * life of the Nest application, and serves the review API (engram.review.v1) beside it; stops
 * both (drain, commit) on shutdown.
 */
@Injectable()
export class DistillerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DistillerService.name);
  private runtime?: DistillerRuntime;
  private reviewLog?: KafkaEventLog;
  private review?: ReviewServer;

  constructor(@Inject(ENGRAM_CONFIG) private readonly config: EngramConfig) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // Read first: a bad tokens file stops start-up before anything connects.
    const tokens = grpcTokensOf(config);
    // Shared settings: the topic prefix, the servers, the retry policy, the partition count of
    // the co-partitioned inputs and the LLM endpoint (ENGRAM_LLM_*; without one it distils and
    // reflects extractively); its own: the review API's address and the reflection hour.
    const groupId = config.topicPrefix + DEFAULT_DISTILLER_GROUP;
    const topics = prefixedDistillerTopics(config.topicPrefix);
    this.runtime = await startDistiller({
      brokers: config.kafka.brokers,
      registryUrl: config.schemaRegistry.url,
      topics,
      groupId,
      partitions: config.inputs.partitions,
      retry: config.retry,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      llm: config.llm,
      settings: { ...config.distiller, prompts: config.segmenter.settings },
      reflector: { scheduledHourUtc: config.distiller.reflectionHourUtc },
    });
    this.reviewLog = new KafkaEventLog(
      this.runtime.kafka,
      new AvroRegistry(config.schemaRegistry.url),
    );
    await this.reviewLog.connect();
    this.review = await startReviewServer({
      desk: new ReviewDesk(this.reviewLog, distillerCodecs(topics)),
      url: config.distiller.reviewGrpcUrl,
      tokens,
    });
    this.logger.log(`distiller running (group ${groupId}), review API on ${this.review.url}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.review?.stop();
    await this.reviewLog?.disconnect();
    await this.runtime?.stop();
  }
}

@Module({ imports: [ConfigModule], providers: [DistillerService] })
export class DistillerModule {}
