import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { observerSettings } from '@engram/core';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePrivateDir } from './private-files';
import { SqliteEventLog } from './sqlite-event-log';
import { SqliteObserverGraph } from './sqlite-observer-graph';
import { SqliteRetrievalStore } from './sqlite-retrieval-store';

// Issue #19, finding 4: embedded data files were 0644 and the data dir 0755, so any local user
// could read every prompt, tool call and memory.

const root = mkdtempSync(join(tmpdir(), 'engram-private-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** Opens every embedded store in `dir`, writes to the log, closes them. */
function openStores(dir: string): void {
  const log = SqliteEventLog.open({ dataDir: dir });
  log.ensureTopic('agent.prompts.v1', 1);
  log.append('agent.prompts.v1', [{ key: 'k', value: Buffer.from('a prompt with a secret') }]);
  const store = SqliteRetrievalStore.open({ dataDir: dir });
  const graph = SqliteObserverGraph.open({ dataDir: dir, rule: observerSettings() });
  // Checked while open: the WAL and shared-memory files exist now.
  const files = readdirSync(dir).map((name) => `${name} ${modeOf(join(dir, name)).toString(8)}`);
  expect(files.filter((entry) => !entry.endsWith(' 600'))).toEqual([]);
  expect(files.some((entry) => entry.startsWith('events.db-wal'))).toBe(true);
  graph.close();
  store.close();
  log.close();
}

describe('embedded data files are private', () => {
  it('should create the data dir (and its parents) 0700 and every file 0600', () => {
    const dir = join(root, 'new', 'data');
    openStores(dir);
    expect(modeOf(dir).toString(8)).toBe('700');
    expect(modeOf(join(root, 'new')).toString(8)).toBe('700');
  });

  it('should tighten a data dir an older Engram left readable', () => {
    const dir = join(root, 'old');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    closeSync(openSync(join(dir, 'events.db'), 'w', 0o644));
    chmodSync(join(dir, 'events.db'), 0o644);
    openStores(dir);
    expect(modeOf(dir).toString(8)).toBe('700');
  });

  it('should leave a shared directory given by mistake as it is', () => {
    const shared = join(root, 'shared');
    mkdirSync(shared, { mode: 0o755 });
    chmodSync(shared, 0o755);
    writeFileSync(join(shared, 'notes.txt'), 'not Engram');
    ensurePrivateDir(shared);
    expect(modeOf(shared).toString(8)).toBe('755');
    const sticky = join(root, 'sticky');
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    ensurePrivateDir(sticky);
    expect(statSync(sticky).mode & 0o1777).toBe(0o1777);
  });
});
