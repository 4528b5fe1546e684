import { EmbedderModule, SharedEmbedder } from '@engram/ai';
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
import { openElasticsearchIndexing, type ElasticsearchIndexing } from './elasticsearch-retrieval';
import { prefixedRetrievalTopics } from './retrieval-topics';
import {
  DEFAULT_INDEXER_GROUP_ID,
  startRetrieval,
  type RunningRetrieval,
} from './retrieval.topology';

/**
 * Runs the retrieval indexer on Kafka and Elasticsearch for the life of the Nest application
 * (distributed mode; embedded mode runs the same topology on the SQLite log and store); stops it
 * (drain, commit) on shutdown. Topics, consumer group and index names all take
 * ENGRAM_TOPIC_PREFIX, so several installations (or test runs) share one Kafka and one
 * Elasticsearch without meeting.
 */
@Injectable()
export class RetrievalIndexerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetrievalIndexerService.name);
  private runtime?: RunningRetrieval;
  private indexing?: ElasticsearchIndexing;

  constructor(
    private readonly platforms: SharedKafkaPlatform,
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // The process's one MiniLM session (`npm run models:setup`), shared with the recall server
    // and the observer; a missing model stops start-up with that command in the message.
    const embedder = await this.embedders.get();
    const platform = await this.platforms.acquire();
    try {
      this.indexing = await openElasticsearchIndexing({
        elasticsearchUrl: config.elasticsearch.url,
        indexPrefix: config.topicPrefix,
        dims: embedder.dims,
        log: (line) => this.logger.log(line),
      });
      this.runtime = await startRetrieval({
        platform,
        backend: this.indexing.backend,
        embedder,
        topics: prefixedRetrievalTopics(config.topicPrefix),
        groupId: config.topicPrefix + DEFAULT_INDEXER_GROUP_ID,
        partitions: config.inputs.partitions,
        retry: config.retry,
      });
    } catch (error) {
      await this.indexing?.close();
      this.indexing = undefined;
      await this.platforms.release();
      throw error;
    }
    this.logger.log(`retrieval indexer running (group ${this.runtime.groupId})`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.runtime) return;
    await this.runtime.stop();
    this.runtime = undefined;
    await this.indexing?.close();
    await this.platforms.release();
  }
}

@Module({
  imports: [ConfigModule, EmbedderModule, KafkaPlatformModule],
  providers: [RetrievalIndexerService],
})
export class RetrievalModule {}
