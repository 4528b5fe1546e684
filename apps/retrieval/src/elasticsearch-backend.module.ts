import { EmbedderModule, SharedEmbedder } from '@engram/ai';
import { ConfigModule, ENGRAM_CONFIG, RETRIEVAL_BACKEND, type EngramConfig } from '@engram/config';
import { KafkaStreamPlatformModule } from '@engram/kafka';
import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { openElasticsearchIndexing, type ElasticsearchIndexing } from './elasticsearch-retrieval';
import type { RetrievalBackend } from './retrieval-backend';

/**
 * The indices the indexer writes, opened for the application context (index names take
 * ENGRAM_TOPIC_PREFIX, vectors the embedder's dimension) and closed on application shutdown,
 * after the indexer stopped.
 */
@Injectable()
export class ElasticsearchIndexingConnection implements OnApplicationShutdown {
  private readonly logger = new Logger('RetrievalIndexerService');
  private opened?: Promise<ElasticsearchIndexing>;

  constructor(
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async backend(): Promise<RetrievalBackend> {
    this.opened ??= this.open();
    return (await this.opened).backend;
  }

  private async open(): Promise<ElasticsearchIndexing> {
    // The process's one MiniLM session (`npm run models:setup`); a missing model stops start-up
    // with that command in the message.
    const embedder = await this.embedders.get();
    return openElasticsearchIndexing({
      elasticsearchUrl: this.config.elasticsearch.url,
      indexPrefix: this.config.topicPrefix,
      dims: embedder.dims,
      log: (line) => this.logger.log(line),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    await (await opened?.catch(() => undefined))?.close();
  }
}

/** Distributed mode's RETRIEVAL_BACKEND: the retrieval indices on Elasticsearch. */
@Global()
@Module({
  imports: [EmbedderModule],
  providers: [
    ElasticsearchIndexingConnection,
    {
      provide: RETRIEVAL_BACKEND,
      useFactory: (connection: ElasticsearchIndexingConnection) => connection.backend(),
      inject: [ElasticsearchIndexingConnection],
    },
  ],
  exports: [RETRIEVAL_BACKEND],
})
export class ElasticsearchBackendModule {}

/**
 * The retrieval indexer's providers on Kafka and Elasticsearch, with the configuration and the
 * model: what its main and the integration tests import beside RetrievalModule.
 */
export const DISTRIBUTED_RETRIEVAL_PROVIDERS = [
  ConfigModule,
  KafkaStreamPlatformModule,
  ElasticsearchBackendModule,
  EmbedderModule,
];
