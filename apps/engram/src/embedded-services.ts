import type { Embedder } from '@engram/ai';
import type { EngramConfig } from '@engram/config';
import { observerSettings, segmenterSettings } from '@engram/core';
import { SqliteEventLog, SqliteObserverGraph } from '@engram/embedded';
import { startEmbeddedObserver, type EmbeddedObserver } from '../../observer/src/observer.embedded';
import {
  prefixedObserverTopics,
  DEFAULT_OBSERVER_GROUP,
} from '../../observer/src/observer.runtime';
import {
  startEmbeddedSegmenter,
  type EmbeddedSegmenter,
} from '../../segmenter/src/segmenter.embedded';
import { prefixedTopics } from '../../segmenter/src/segmenter.module';

export interface EmbeddedServicesOptions {
  config: EngramConfig;
  dataDir: string;
  /** Timers (idle episodes, waiting lifecycle events); short in the demo and tests. */
  sweepIntervalMs?: number;
  /** The observer's draft embedder (novelty check); absent: none. */
  embedder?: Pick<Embedder, 'id' | 'embed'>;
}

export interface EmbeddedServices {
  log: SqliteEventLog;
  graph: SqliteObserverGraph;
  segmenter: EmbeddedSegmenter;
  observer: EmbeddedObserver;
  /** Names for people: what runs. */
  running: string[];
  stop(): Promise<void>;
}

/**
 * Every service that runs embedded, in this process, on the SQLite log and graph in `dataDir`
 * (SPEC §2) — what `engram start` and `engram demo` run. Same stages as distributed mode, same
 * topic names and consumer groups (so `engram replay --wait` waits for the same groups).
 */
export async function startEmbeddedServices(
  options: EmbeddedServicesOptions,
): Promise<EmbeddedServices> {
  const { config, dataDir } = options;
  const log = SqliteEventLog.open({ dataDir });
  const settings = observerSettings();
  const graph = SqliteObserverGraph.open({ dataDir, rule: settings });
  const sweepIntervalMs = options.sweepIntervalMs ?? config.segmenter.sweepIntervalMs;
  const segmenter = await startEmbeddedSegmenter({
    log,
    settings: segmenterSettings({
      inactivityTimeoutMinutes: config.segmenter.inactivityMinutes,
      inactivityTimeoutByChannel: config.segmenter.inactivityByChannel,
      inactivityTimeoutByTenant: config.segmenter.inactivityByTenant,
    }),
    topics: prefixedTopics(config.topicPrefix),
    groupId: config.topicPrefix + config.segmenter.groupId,
    partitions: config.segmenter.partitions,
    sweepIntervalMs,
    retry: config.retry,
  });
  const observer = await startEmbeddedObserver({
    log,
    graph,
    settings,
    topics: prefixedObserverTopics(config.topicPrefix),
    groupId: config.topicPrefix + DEFAULT_OBSERVER_GROUP,
    partitions: config.segmenter.partitions,
    sweepIntervalMs,
    retry: config.retry,
    ...(options.embedder && { embedder: options.embedder }),
  });
  return {
    log,
    graph,
    segmenter,
    observer,
    running: ['segmenter', 'observer'],
    async stop() {
      await observer.stop();
      await segmenter.stop();
      graph.close();
      log.close();
    },
  };
}
