import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteRetrievalStore } from './sqlite-retrieval-store';
import { sqliteStoreWriter } from './sqlite-retrieval-writer';

describe('sqliteStoreWriter', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-'));
    dirs.push(dir);
    return SqliteRetrievalStore.open({ dataDir: dir });
  };
  const document = { tenantId: 'acme', projectId: 'api', text: 'kafka consumer lag' };

  it('should upsert and delete by id in one transaction and report each outcome', async () => {
    const store = open();
    try {
      const writer = sqliteStoreWriter(store);
      expect(await writer.write([])).toEqual({
        requests: 0,
        indexed: 0,
        deleted: 0,
        alreadyAbsent: 0,
      });
      expect(
        await writer.write([
          { action: 'upsert', tier: 'memories', id: 'a', document },
          { action: 'upsert', tier: 'memories', id: 'a', document },
          { action: 'upsert', tier: 'turns', id: 'b', document },
        ]),
      ).toEqual({ requests: 1, indexed: 3, deleted: 0, alreadyAbsent: 0 });
      expect(
        await writer.write([
          { action: 'delete', tier: 'memories', id: 'a' },
          { action: 'delete', tier: 'memories', id: 'a' },
        ]),
      ).toEqual({ requests: 1, indexed: 0, deleted: 1, alreadyAbsent: 1 });
      expect(store.counts()).toEqual({ memories: 0, episodes: 0, turns: 1 });
      expect(writer.deleteAccessCounters).toBeUndefined();
    } finally {
      store.close();
    }
  });

  it('should reject, writing nothing, when a document cannot be stored', async () => {
    const store = open();
    try {
      const writer = sqliteStoreWriter(store);
      await expect(
        writer.write([
          { action: 'upsert', tier: 'memories', id: 'a', document },
          { action: 'upsert', tier: 'memories', id: 'b', document: { text: 'no scope' } },
        ]),
      ).rejects.toThrow(/tenantId/);
      expect(store.counts().memories).toBe(0);
    } finally {
      store.close();
    }
  });
});
