import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { observerSettings } from '@engram/core';
import { describeObserverGraphContract } from '../../core/src/ports/testing/observer-graph.contract';
import { SqliteObserverGraph } from './sqlite-observer-graph';

describeObserverGraphContract('embedded SQLite graph', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-graph-'));
  const store = SqliteObserverGraph.open({ dataDir: dir, rule: observerSettings() });
  let n = 0;
  return Promise.resolve({
    store,
    projectName: (prefix: string) => `acme/${prefix}-${n++}`,
    close: () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
});
