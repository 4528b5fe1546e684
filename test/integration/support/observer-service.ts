import { openObserverGraph, type Neo4jObserverGraphWriter } from '@engram/neo4j';
import { inject } from 'vitest';
import {
  startObserver,
  type ObserverOptions,
  type RunningObserver,
} from '../../../apps/observer/src/observer.topology';
import { testPlatform } from './kafka-fixtures';

export interface TestObserver extends RunningObserver {
  /** The Neo4j writer it writes through (its counters). */
  writer: Neo4jObserverGraphWriter;
}

/**
 * The observer in distributed mode on the test servers, its providers as the service module
 * chooses them: a Kafka platform and a Neo4j graph of its own (at `neo4jUrl`, e.g. a cuttable
 * proxy), both closed by `stop` after the observer has drained and committed.
 */
export async function startTestObserver(
  options: Omit<ObserverOptions, 'platform' | 'graph'> & {
    neo4jUrl?: string;
    /** How long the Neo4j driver retries a failing write itself before the consumer backs off. */
    graphRetryWithinMs?: number;
  },
): Promise<TestObserver> {
  const { neo4jUrl, graphRetryWithinMs, ...observerOptions } = options;
  const platform = await testPlatform();
  const graph = await openObserverGraph(
    { url: neo4jUrl ?? inject('infra').neo4jUrl },
    observerOptions.settings,
    { ...(graphRetryWithinMs !== undefined && { retryWithinMs: graphRetryWithinMs }) },
  ).catch(async (error: unknown) => {
    await platform.close();
    throw error;
  });
  const closeProviders = async () => {
    await graph.close();
    await platform.close();
  };
  let running: RunningObserver;
  try {
    running = await startObserver({ ...observerOptions, platform, graph: graph.writer });
  } catch (error) {
    await closeProviders();
    throw error;
  }
  return {
    ...running,
    writer: graph.writer,
    async stop() {
      await running.stop();
      await closeProviders();
    },
  };
}
