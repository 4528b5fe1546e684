import { EmbedderModule } from '@engram/ai';
import { ConfiguredServiceSettingsModule } from '@engram/config';
import { KafkaStreamPlatformModule } from '@engram/kafka';
import { Neo4jObserverGraphModule } from '@engram/neo4j';
import { Global, Module } from '@nestjs/common';
import { ElasticsearchBackendModule } from '@engram/app-retrieval';

/**
 * Distributed mode's providers of the services' tokens (issue #18): STREAM_PLATFORM on Kafka and
 * the Schema Registry, OBSERVER_GRAPH on Neo4j, RETRIEVAL_BACKEND on Elasticsearch, the local
 * MiniLM model as SharedEmbedder, and the configured LLM and review API address. Each is opened
 * when the application context is created and closed on application shutdown, after the services
 * stopped (they stop before, in beforeApplicationShutdown).
 */
@Global()
@Module({
  imports: [
    EmbedderModule,
    KafkaStreamPlatformModule,
    Neo4jObserverGraphModule,
    ElasticsearchBackendModule,
    ConfiguredServiceSettingsModule,
  ],
})
export class DistributedProvidersModule {}
