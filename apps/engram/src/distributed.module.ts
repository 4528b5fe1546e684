import { Module } from '@nestjs/common';
import { DistillerModule } from '@engram/app-distiller';
import { ObserverModule } from '@engram/app-observer';
import { RecallServerModule, RetrievalModule } from '@engram/app-retrieval';
import { SegmenterModule } from '@engram/app-segmenter';

/**
 * `engram start --distributed`: every service in one process, each its own module with its own
 * consumer group, exactly as when they run as separate deployments (`apps/<service>/src/main.ts`).
 */
@Module({
  imports: [SegmenterModule, ObserverModule, DistillerModule, RetrievalModule, RecallServerModule],
})
export class DistributedEngramModule {}
