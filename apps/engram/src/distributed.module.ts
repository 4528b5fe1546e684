import { ConfigModule } from '@engram/config';
import { MetricsModule } from '@engram/metrics';
import type { DynamicModule } from '@nestjs/common';
import { RecallServerModule } from '@engram/app-retrieval';
import { DistributedProvidersModule } from './distributed-providers.module';
import { engramRootModule } from './engram-root.module';

/**
 * `engram start --distributed`: every service in one process on Kafka, Neo4j and Elasticsearch,
 * each with its own consumer group, exactly as when they run as separate deployments
 * (`apps/<service>/src/main.ts`), plus the recall server and one metrics and health server for
 * the process (MetricsModule).
 */
export function distributedEngramModule(): DynamicModule {
  return engramRootModule(
    [ConfigModule, DistributedProvidersModule],
    [RecallServerModule, MetricsModule],
  );
}
