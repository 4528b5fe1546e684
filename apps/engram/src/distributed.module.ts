import { MetricsModule } from '@engram/metrics';
import { Module } from '@nestjs/common';
import { DistillerModule } from '@engram/app-distiller';
import { ObserverModule } from '@engram/app-observer';
import { RecallServerModule, RetrievalModule } from '@engram/app-retrieval';
import { SegmenterModule } from '@engram/app-segmenter';

/**
 * `engram start --distributed`: every service in one process, each its own module with its own
 * consumer group, exactly as when they run as separate deployments (`apps/<service>/src/main.ts`),
 * and one metrics and health server for the process (MetricsModule).
 */
@Module({
  imports: [
    SegmenterModule,
    ObserverModule,
    DistillerModule,
    RetrievalModule,
    RecallServerModule,
    MetricsModule,
  ],
})
export class DistributedEngramModule {}
