import { Module } from '@nestjs/common';
import { DistillerModule } from '../../distiller/src/distiller.module';
import { ObserverModule } from '../../observer/src/observer.module';
import { RecallServerModule } from '../../retrieval/src/recall.module';
import { RetrievalModule } from '../../retrieval/src/retrieval.module';
import { SegmenterModule } from '../../segmenter/src/segmenter.module';

/**
 * `engram start --distributed`: every service in one process, each its own module with its own
 * consumer group, exactly as when they run as separate deployments (`apps/<service>/src/main.ts`).
 */
@Module({
  imports: [SegmenterModule, ObserverModule, DistillerModule, RetrievalModule, RecallServerModule],
})
export class DistributedEngramModule {}
