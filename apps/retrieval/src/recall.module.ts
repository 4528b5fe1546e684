import { EmbedderModule, SharedEmbedder } from '@engram/ai';
import { ConfigModule, ENGRAM_CONFIG, grpcTokensOf, type EngramConfig } from '@engram/config';
import { AvroRegistry, createKafka, KafkaEventLog } from '@engram/kafka';
import { createNeo4jDriver, Neo4jObserverGraphWriter } from '@engram/neo4j';
import type { Driver } from 'neo4j-driver';
import {
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { hydeClientOf } from './recall-stack';
import { startRecallServer, type RecallServerRuntime } from './recall.runtime';
import { publishRecordsTo, publishTombstonesTo } from './record-publisher';

/**
 * Runs the gRPC recall server for the life of a Nest application (`engram start --distributed`,
 * or the retrieval service's main): index names take ENGRAM_TOPIC_PREFIX like the indexer's, so
 * both halves meet on the same indices.
 */
@Injectable()
export class RecallServerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private runtime?: RecallServerRuntime;
  private graph?: Driver;
  private events?: KafkaEventLog;

  constructor(
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // Read first: a bad tokens file stops start-up before anything connects.
    const tokens = grpcTokensOf(config);
    // GetFileNeighbors reads the observer's graph on Neo4j.
    this.graph = createNeo4jDriver(config.neo4j);
    // Remember and Feedback publish on the contract topics (agent.lifecycle.v1,
    // memory.memories.v1; Feedback's deletions as tombstones).
    const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'engram-recall' });
    const events = new KafkaEventLog(kafka, new AvroRegistry(config.schemaRegistry.url));
    this.events = events;
    await events.connect();
    this.runtime = await startRecallServer({
      publish: publishRecordsTo(events, config.topicPrefix),
      publishTombstones: publishTombstonesTo(events, config.topicPrefix),
      elasticsearchUrl: config.elasticsearch.url,
      embedder: await this.embedders.get(),
      indexPrefix: config.topicPrefix,
      url: config.recall.grpcUrl,
      tokens,
      hyde: hydeClientOf(config.llm),
      ranking: config.ranking,
      neighbours: new Neo4jObserverGraphWriter(this.graph, config.observer),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
    await this.events?.disconnect();
    await this.graph?.close();
  }
}

@Module({ imports: [ConfigModule, EmbedderModule], providers: [RecallServerService] })
export class RecallServerModule {}
