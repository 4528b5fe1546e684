import { EmbedderModule, SharedEmbedder } from '@engram/ai';
import { ConfigModule, ENGRAM_CONFIG, type EngramConfig } from '@engram/config';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  DEFAULT_OBSERVER_GROUP,
  prefixedObserverTopics,
  startObserver,
  type ObserverRuntime,
} from './observer.runtime';

/** Runs the observer for the life of the Nest application; stops it (drain, commit) on shutdown. */
@Injectable()
export class ObserverService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ObserverService.name);
  private runtime?: ObserverRuntime;

  constructor(
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // The observer has no settings of its own in @engram/config yet: it shares the topic prefix,
    // the servers, the retry policy and the partition count of the co-partitioned inputs.
    const groupId = config.topicPrefix + DEFAULT_OBSERVER_GROUP;
    this.runtime = await startObserver({
      brokers: config.kafka.brokers,
      registryUrl: config.schemaRegistry.url,
      neo4j: config.neo4j,
      topics: prefixedObserverTopics(config.topicPrefix),
      groupId,
      partitions: config.inputs.partitions,
      settings: config.observer,
      retry: config.retry,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      // The local MiniLM model (`npm run models:setup`) for the novelty check of promotions; a
      // missing model stops start-up with that command in the message.
      embedder: await this.embedders.get(),
    });
    this.logger.log(`observer running (group ${groupId})`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
  }
}

@Module({ imports: [ConfigModule, EmbedderModule], providers: [ObserverService] })
export class ObserverModule {}
