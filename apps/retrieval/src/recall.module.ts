import { EmbedderModule, SharedEmbedder } from '@engram/ai';
import { ConfigModule, ENGRAM_CONFIG, grpcTokensOf, type EngramConfig } from '@engram/config';
import { KafkaPlatformModule, SharedKafkaPlatform } from '@engram/kafka';
import { createNeo4jDriver, Neo4jObserverGraphWriter } from '@engram/neo4j';
import type { Driver } from 'neo4j-driver';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { hydeClientOf } from './recall-stack';
import { startRecallServer, type RecallServerRuntime } from './recall-server';
import { publishRecordsTo, publishTombstonesTo } from './record-publisher';
import { openElasticsearchRecall, type ElasticsearchRecall } from './elasticsearch-retrieval';

/**
 * Runs the gRPC recall server on Elasticsearch for the life of a Nest application (`engram start
 * --distributed`, or the retrieval service's main; embedded mode serves the same server on the
 * SQLite store): index names take ENGRAM_TOPIC_PREFIX like the indexer's, so both halves meet on
 * the same indices.
 */
@Injectable()
export class RecallServerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RecallServer');
  private runtime?: RecallServerRuntime;
  private recall?: ElasticsearchRecall;
  private graph?: Driver;
  private holdsPlatform = false;

  constructor(
    private readonly platforms: SharedKafkaPlatform,
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // Read first: a bad tokens file stops start-up before anything connects.
    const tokens = grpcTokensOf(config);
    // The process's one MiniLM session, the indexer's: a query is embedded by the same model.
    const embedder = await this.embedders.get();
    // (acquire counts a holder even when it fails to connect: released below then too)
    this.holdsPlatform = true;
    try {
      // Remember and Feedback publish on the contract topics (agent.lifecycle.v1,
      // memory.memories.v1; Feedback's deletions as tombstones), through the process's platform.
      const platform = await this.platforms.acquire();
      const events = await platform.eventLog();
      // GetFileNeighbors reads the observer's graph on Neo4j.
      this.graph = createNeo4jDriver(config.neo4j);
      this.recall = openElasticsearchRecall({
        elasticsearchUrl: config.elasticsearch.url,
        indexPrefix: config.topicPrefix,
        warn: (message) => this.logger.warn(message),
      });
      this.runtime = await startRecallServer({
        backend: this.recall.backend,
        publish: publishRecordsTo(events, config.topicPrefix),
        publishTombstones: publishTombstonesTo(events, config.topicPrefix),
        embedder,
        url: config.recall.grpcUrl,
        tokens,
        hyde: hydeClientOf(config.llm),
        ranking: config.ranking,
        neighbours: new Neo4jObserverGraphWriter(this.graph, config.observer),
        // Session notes as a view of agent.lifecycle.v1: every replica holds them all.
        lifecycle: {
          platform,
          topicPrefix: config.topicPrefix,
          partitions: config.inputs.partitions,
        },
      });
    } catch (error) {
      await this.onApplicationShutdown();
      throw error;
    }
  }

  /** Closes whatever was opened (also after a failed start). */
  async onApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
    this.runtime = undefined;
    await this.recall?.close();
    this.recall = undefined;
    await this.graph?.close();
    this.graph = undefined;
    if (this.holdsPlatform) {
      this.holdsPlatform = false;
      await this.platforms.release();
    }
  }
}

@Module({
  imports: [ConfigModule, EmbedderModule, KafkaPlatformModule],
  providers: [RecallServerService],
})
export class RecallServerModule {}
