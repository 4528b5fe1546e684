import { observerSettings, type GraphCoAccessNeighbour } from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import {
  createGraphWriterDriver,
  ensureGraphSchema,
  Neo4jObserverGraphWriter,
  type ObserverGraphBatch,
} from '@engram/neo4j';
import type { Driver } from 'neo4j-driver';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  clearBenchProject,
  graphBatches,
  syntheticToolCalls,
} from '../../apps/engram/src/commands/bench-observe';
import { uniqueName } from './support/unique';

const rounded = (neighbours: GraphCoAccessNeighbour[]) =>
  neighbours.map((n) => ({
    ...n,
    weight: Number(n.weight.toFixed(6)),
    avgTimeDeltaMs: Number(n.avgTimeDeltaMs.toFixed(3)),
  }));

describe('observer graph writes over Neo4j transaction memory (real Neo4j)', () => {
  let driver: Driver;
  let dir: string;
  const project = uniqueName('it-graph-split');

  beforeAll(async () => {
    driver = createGraphWriterDriver({ url: inject('infra').neo4jUrl });
    await ensureGraphSchema(driver);
    dir = mkdtempSync(join(tmpdir(), 'engram-graph-split-'));
  });

  afterAll(async () => {
    await clearBenchProject(driver, project);
    await driver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should write a batch Neo4j refuses as too big in halves, to the graph the embedded store has', async () => {
    // Two catch-up batches of 80,000 calls of 4,000 sessions: the second moves the pair facts
    // the first stored for every session, past deploy/local/neo4j/neo4j.conf's 256 MiB of
    // transaction memory. Retried whole, it would fail the same way forever.
    const batches: ObserverGraphBatch[] = await graphBatches(
      syntheticToolCalls(4_000, project),
      80_000,
    );
    expect(batches).toHaveLength(2);
    const writer = new Neo4jObserverGraphWriter(driver, observerSettings());
    for (const batch of batches) await writer.write(batch);
    expect(writer.counters.splits).toBeGreaterThan(0);

    // The oracle: the same batches in the embedded store (one contract suite runs on both).
    const embedded = SqliteObserverGraph.open({ dataDir: dir, rule: observerSettings() });
    try {
      for (const batch of batches) await embedded.write(batch);
      const paths = [...new Set(batches.flatMap((b) => b.touches.map((t) => t.path)))].sort();
      expect(paths.length).toBeGreaterThan(20);
      for (const path of paths.slice(0, 20)) {
        const query = { tenantId: 'bench', projectId: project, path, k: 10 };
        const expected = rounded(await embedded.topCoAccessNeighbours(query));
        expect(expected.length).toBeGreaterThan(0);
        expect(rounded(await writer.topCoAccessNeighbours(query))).toEqual(expected);
      }
    } finally {
      embedded.close();
    }
  }, 300_000);
});
