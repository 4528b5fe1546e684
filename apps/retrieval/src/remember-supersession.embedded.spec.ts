import { DEFAULT_RANKING_CONFIG, SUPERSEDED_PREFIX } from '@engram/core';
import { SqliteRetrievalStore } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecallStack } from './recall-stack';
import { createRecallStack } from './retrieval-backend';
import { sqliteBackend } from './sqlite-backend';
import { LEXICAL_ONLY_EMBEDDER } from './retrieval-embedders';
import { PROJECT, TENANT } from './testing/records';

// Issue #20: a person's Remember is indexed at once (before the log's consumer gets to it), and
// so is the demotion of the older fact it contradicts: between the two, nothing may inject the
// older one. No consumer runs here: only Remember's own write reaches the store.

const SCOPE = { tenantId: TENANT, projectId: PROJECT };
const FILE = 'src/billing/invoice-numbering.ts';

describe("Remember's immediate index resolves supersession", () => {
  let dir: string;
  let store: SqliteRetrievalStore;
  let stack: RecallStack;

  const teach = (text: string) =>
    stack.remember.remember({
      ...SCOPE,
      userId: 'dana',
      text,
      type: 'gotcha',
      relatedFiles: [FILE],
    });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-remember-supersession-'));
    store = SqliteRetrievalStore.open({ dataDir: dir });
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(store),
      embedder: LEXICAL_ONLY_EMBEDDER,
      publish: () => Promise.resolve(),
    });
  });

  afterAll(async () => {
    await stack.access.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should demote the contradicted fact at once: marked in a search, never injected', async () => {
    const old = await teach(
      'Invoice numbering must hold the advisory lock or workers apply it twice',
    );
    const current = await teach(
      'Invoice numbering no longer needs the advisory lock: the job queue runs it one at a time',
    );
    // Also asked in the old fact's own words, which it matches best: the current fact is the one
    // result, the old one its history (prefixed, penalised), never a result of its own.
    for (const query of [
      'invoice numbering advisory lock',
      'must hold the advisory lock or workers apply it twice',
    ]) {
      const { results } = await stack.service.recall({
        ...SCOPE,
        query,
        tier: 'memories',
        track: false,
      });
      expect(results.map((hit) => hit.id)).toEqual([current.memoryId]);
      const [result] = results;
      if (result.tier !== 'memories') throw new Error(`a memory expected, got ${result.tier}`);
      expect(result.replaces).toEqual([
        {
          memoryId: old.memoryId,
          content: `${SUPERSEDED_PREFIX} Invoice numbering must hold the advisory lock or workers apply it twice`,
          confidence: expect.closeTo(result.memory.memory.confidence * 0.5, 10) as number,
          reason: 'superseded',
        },
      ]);
    }
    // A person's lessons are verified: both would be injected but for the supersession.
    const injected = await stack.context.injectForFile({ ...SCOPE, filePath: FILE });
    expect(injected.memories.map((m) => m.memory.memoryId)).toEqual([current.memoryId]);
  });
});
