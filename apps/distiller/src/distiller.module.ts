import { loadConfig } from '@engram/config';
import {
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  DEFAULT_DISTILLER_GROUP,
  prefixedDistillerTopics,
  startDistiller,
  type DistillerRuntime,
} from './distiller.runtime';

/** Runs the distiller for the life of the Nest application; stops it (drain, commit) on shutdown. */
@Injectable()
export class DistillerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DistillerService.name);
  private runtime?: DistillerRuntime;

  async onApplicationBootstrap(): Promise<void> {
    const config = loadConfig();
    // The distiller has no settings of its own in @engram/config yet: it shares the topic prefix,
    // the servers, the retry policy, the partition count of the co-partitioned inputs and the
    // LLM endpoint (ENGRAM_LLM_*; without one it distils extractively).
    const groupId = config.topicPrefix + DEFAULT_DISTILLER_GROUP;
    this.runtime = await startDistiller({
      brokers: config.kafka.brokers,
      registryUrl: config.schemaRegistry.url,
      topics: prefixedDistillerTopics(config.topicPrefix),
      groupId,
      partitions: config.segmenter.partitions,
      retry: config.retry,
      llm: config.llm,
    });
    this.logger.log(`distiller running (group ${groupId})`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
  }
}

@Module({ providers: [DistillerService] })
export class DistillerModule {}
