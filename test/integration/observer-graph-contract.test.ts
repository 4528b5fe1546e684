import { observerSettings } from '@engram/core';
import {
  createGraphWriterDriver,
  ensureGraphSchema,
  Neo4jObserverGraphWriter,
} from '@engram/neo4j';
import { inject } from 'vitest';
import { describeObserverGraphContract } from '../../libs/core/src/ports/testing/observer-graph.contract';
import { uniqueName } from './support/unique';

// The same contract suite the embedded SQLite graph passes in the unit tier, on real Neo4j.
describeObserverGraphContract('Neo4j', async () => {
  const driver = createGraphWriterDriver({ url: inject('infra').neo4jUrl });
  await ensureGraphSchema(driver);
  return {
    store: new Neo4jObserverGraphWriter(driver, observerSettings()),
    projectName: (prefix: string) => uniqueName(`acme/${prefix}`),
    close: () => driver.close(),
  };
});
