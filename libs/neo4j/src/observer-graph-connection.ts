import type { Driver } from 'neo4j-driver';
import { createGraphWriterDriver } from './graph-writer-driver';
import type { Neo4jConnection } from './neo4j-client';
import { Neo4jObserverGraphWriter } from './observer-graph-writer';
import type { CoAccessDirectionRule } from './observer-graph.types';
import { ensureGraphSchema } from './schema-setup';

/** The observer's graph on Neo4j, opened for a stream stage: whoever opens it closes it. */
export interface OpenedObserverGraph {
  writer: Neo4jObserverGraphWriter;
  driver: Driver;
  close(): Promise<void>;
}

/**
 * The distributed mode's observer graph provider: a fail-fast writer driver (see
 * createGraphWriterDriver), the graph's constraints in place, and the writer on it.
 */
export async function openObserverGraph(
  connection: Neo4jConnection,
  rule: CoAccessDirectionRule,
  options: { retryWithinMs?: number } = {},
): Promise<OpenedObserverGraph> {
  const driver = createGraphWriterDriver(connection, options);
  try {
    await ensureGraphSchema(driver);
  } catch (error) {
    await driver.close();
    throw error;
  }
  return {
    writer: new Neo4jObserverGraphWriter(driver, rule),
    driver,
    close: () => driver.close(),
  };
}
