import { EmbedderModule, SharedEmbedder } from '@engram/ai';
import { ConfigModule, ENGRAM_CONFIG, type EngramConfig } from '@engram/config';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  DEFAULT_INDEXER_GROUP_ID,
  startRetrievalIndexer,
  type RetrievalIndexerRuntime,
} from './retrieval.runtime';
import { prefixedRetrievalTopics } from './retrieval-topics';

/**
 * Runs the retrieval indexer for the life of the Nest application; stops it (drain, commit) on
 * shutdown. Topics, consumer group and index names all take ENGRAM_TOPIC_PREFIX, so several
 * installations (or test runs) share one Kafka and one Elasticsearch without meeting.
 */
@Injectable()
export class RetrievalIndexerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetrievalIndexerService.name);
  private runtime?: RetrievalIndexerRuntime;

  constructor(
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // The local MiniLM model (`npm run models:setup`); a missing model stops start-up with that
    // command in the message.
    const embedder = await this.embedders.get();
    this.runtime = await startRetrievalIndexer({
      brokers: config.kafka.brokers,
      registryUrl: config.schemaRegistry.url,
      elasticsearchUrl: config.elasticsearch.url,
      embedder,
      topics: prefixedRetrievalTopics(config.topicPrefix),
      indexPrefix: config.topicPrefix,
      groupId: config.topicPrefix + DEFAULT_INDEXER_GROUP_ID,
      retry: config.retry,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    });
    this.logger.log(`retrieval indexer running (group ${this.runtime.groupId})`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
  }
}

@Module({ imports: [ConfigModule, EmbedderModule], providers: [RetrievalIndexerService] })
export class RetrievalModule {}
