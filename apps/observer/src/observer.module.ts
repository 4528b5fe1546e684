import { EmbedderModule, SharedEmbedder } from '@engram/ai';
import { ConfigModule, ENGRAM_CONFIG, type EngramConfig } from '@engram/config';
import { KafkaPlatformModule, SharedKafkaPlatform } from '@engram/kafka';
import { openObserverGraph, type OpenedObserverGraph } from '@engram/neo4j';
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
  type RunningObserver,
} from './observer.topology';

/**
 * Runs the observer on Kafka and Neo4j for the life of the Nest application (distributed mode;
 * embedded mode runs the same topology on the SQLite log and graph); stops it (drain, commit) on
 * shutdown, then releases the platform and closes the graph.
 */
@Injectable()
export class ObserverService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ObserverService.name);
  private runtime?: RunningObserver;
  private graph?: OpenedObserverGraph;

  constructor(
    private readonly platforms: SharedKafkaPlatform,
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // The observer has no group setting of its own in @engram/config yet: it shares the topic
    // prefix, the servers, the retry policy, the timers' interval and the partition count of the
    // co-partitioned inputs.
    const groupId = config.topicPrefix + DEFAULT_OBSERVER_GROUP;
    // The local MiniLM model (`npm run models:setup`) for the novelty check of promotions; a
    // missing model stops start-up with that command in the message.
    const embedder = await this.embedders.get();
    const platform = await this.platforms.acquire();
    try {
      this.graph = await openObserverGraph(config.neo4j, config.observer);
      this.runtime = await startObserver({
        platform,
        graph: this.graph.writer,
        settings: config.observer,
        topics: prefixedObserverTopics(config.topicPrefix),
        groupId,
        partitions: config.inputs.partitions,
        retry: config.retry,
        sweepIntervalMs: config.segmenter.sweepIntervalMs,
        embedder,
      });
    } catch (error) {
      await this.graph?.close();
      this.graph = undefined;
      await this.platforms.release();
      throw error;
    }
    this.logger.log(`observer running (group ${groupId})`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.runtime) return;
    await this.runtime.stop();
    this.runtime = undefined;
    await this.platforms.release();
    await this.graph?.close();
    this.graph = undefined;
  }
}

@Module({
  imports: [ConfigModule, EmbedderModule, KafkaPlatformModule],
  providers: [ObserverService],
})
export class ObserverModule {}
