import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { DistillerModule, DistillerService } from '@engram/app-distiller';
import { ObserverModule, ObserverService } from '@engram/app-observer';
import { RetrievalIndexerService, RetrievalModule } from '@engram/app-retrieval';
import { SegmenterModule, SegmenterService } from '@engram/app-segmenter';

/** The services `engram start` runs, in both modes; each injects the mode's providers. */
export const ENGRAM_SERVICE_MODULES = [
  SegmenterModule,
  ObserverModule,
  DistillerModule,
  RetrievalModule,
] as const;

/** Their services (Nest providers), each started on bootstrap and stopped before shutdown. */
export const ENGRAM_SERVICES = [
  SegmenterService,
  ObserverService,
  DistillerService,
  RetrievalIndexerService,
] as const;

/** The names the services go by in the start-up line. */
export const ENGRAM_SERVICE_NAMES = ['segmenter', 'observer', 'distiller', 'retrieval indexer'];

@Module({})
export class EngramRootModule {}

/**
 * `engram start`'s one root module (issue #18): the mode's providers (with the configuration),
 * the list of services, and what the mode serves beside them (`extra`: the recall server and
 * the metrics server distributed).
 */
export function engramRootModule(
  providers: NonNullable<ModuleMetadata['imports']>,
  extra: NonNullable<ModuleMetadata['imports']> = [],
): DynamicModule {
  return {
    module: EngramRootModule,
    imports: [...providers, ...ENGRAM_SERVICE_MODULES, ...extra],
  };
}
