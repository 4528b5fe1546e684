import { SharedEmbedder } from '@engram/ai';
import {
  ENGRAM_CONFIG,
  RETRIEVAL_BACKEND,
  STREAM_PLATFORM,
  type EngramConfig,
} from '@engram/config';
import type { StreamPlatform } from '@engram/core';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { RetrievalBackend } from './retrieval-backend';
import { prefixedRetrievalTopics } from './retrieval-topics';
import {
  DEFAULT_INDEXER_GROUP_ID,
  startRetrieval,
  type RunningRetrieval,
} from './retrieval.topology';

/**
 * Runs the retrieval indexer for the life of the Nest application on the mode's providers
 * (issue #18: STREAM_PLATFORM, RETRIEVAL_BACKEND, SharedEmbedder — Kafka and Elasticsearch
 * distributed, the SQLite log and store embedded); stops it (drain, commit) before the providers
 * close (beforeApplicationShutdown). Topics, consumer group and index names all take
 * ENGRAM_TOPIC_PREFIX, so several installations (or test runs) share one Kafka and one
 * Elasticsearch without meeting.
 */
@Injectable()
export class RetrievalIndexerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RetrievalIndexerService.name);
  private runtime?: RunningRetrieval;

  constructor(
    @Inject(STREAM_PLATFORM) private readonly platform: StreamPlatform,
    @Inject(RETRIEVAL_BACKEND) private readonly backend: RetrievalBackend,
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  /** The running indexer (after bootstrap). */
  get running(): RunningRetrieval | undefined {
    return this.runtime;
  }

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // The process's one embedder, shared with the recall server and the observer.
    const embedder = await this.embedders.get();
    this.runtime = await startRetrieval({
      platform: this.platform,
      backend: this.backend,
      embedder,
      topics: prefixedRetrievalTopics(config.topicPrefix),
      groupId: config.topicPrefix + DEFAULT_INDEXER_GROUP_ID,
      partitions: config.inputs.partitions,
      retry: config.retry,
    });
    this.logger.log(`retrieval indexer running (group ${this.runtime.groupId})`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
    this.runtime = undefined;
  }
}

/** The retrieval indexer; the root module imports the mode's providers (global modules). */
@Module({ providers: [RetrievalIndexerService] })
export class RetrievalModule {}
