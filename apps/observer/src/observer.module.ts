import { SharedEmbedder } from '@engram/ai';
import {
  ENGRAM_CONFIG,
  OBSERVER_GRAPH,
  SERVICE_TIMERS,
  STREAM_PLATFORM,
  type EngramConfig,
  type ServiceTimers,
} from '@engram/config';
import type { ObserverGraphWriter, StreamPlatform } from '@engram/core';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  DEFAULT_OBSERVER_GROUP,
  prefixedObserverTopics,
  startObserver,
  type RunningObserver,
} from './observer.topology';

/**
 * Runs the observer for the life of the Nest application on the mode's providers (issue #18:
 * STREAM_PLATFORM, OBSERVER_GRAPH, SharedEmbedder — Kafka and Neo4j distributed, the SQLite log
 * and graph embedded); stops it (drain, commit) before the providers close
 * (beforeApplicationShutdown).
 */
@Injectable()
export class ObserverService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ObserverService.name);
  private runtime?: RunningObserver;

  constructor(
    @Inject(STREAM_PLATFORM) private readonly platform: StreamPlatform,
    @Inject(OBSERVER_GRAPH) private readonly graph: ObserverGraphWriter,
    private readonly embedders: SharedEmbedder,
    @Inject(ENGRAM_CONFIG) private readonly config: EngramConfig,
    @Optional() @Inject(SERVICE_TIMERS) private readonly timers: ServiceTimers | null,
  ) {}

  /** The running observer (after bootstrap, until shutdown). */
  get running(): RunningObserver | undefined {
    return this.runtime;
  }

  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    // The observer has no group setting of its own in @engram/config yet: it shares the topic
    // prefix, the servers, the retry policy, the timers' interval and the partition count of the
    // co-partitioned inputs.
    const groupId = config.topicPrefix + DEFAULT_OBSERVER_GROUP;
    // The novelty check of promotions embeds with the mode's embedder: distributed, the local
    // MiniLM model (a missing one stops start-up with `npm run models:setup` in the message);
    // embedded, none without it (no vectors: no novelty check).
    const embedder = await this.embedders.get();
    this.runtime = await startObserver({
      platform: this.platform,
      graph: this.graph,
      settings: config.observer,
      topics: prefixedObserverTopics(config.topicPrefix),
      groupId,
      partitions: config.inputs.partitions,
      retry: config.retry,
      sweepIntervalMs: this.timers?.sweepIntervalMs ?? config.segmenter.sweepIntervalMs,
      ...(embedder.dims > 0 && { embedder }),
    });
    this.logger.log(`observer running (group ${groupId})`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runtime?.stop();
    this.runtime = undefined;
  }
}

/** The observer; the root module imports the mode's providers (global modules). */
@Module({ providers: [ObserverService] })
export class ObserverModule {}
