import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseConfig } from '@engram/config';
import { parseRecallRequest, type RecallRequestInput } from '@engram/core';
import { SqliteRetrievalStore } from '@engram/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecallStack, sqliteBackend, LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import type { RecallService } from '@engram/app-retrieval';
import { startEmbeddedServices } from '../embedded-services';
import { DEMO_SESSION } from './demo.command';
import { answerRecall, runRecallBatch, type RecallDeps } from './recall-answer';
import { embeddedRecallDeps } from './recall.command';
import { formatRecall, type RecallJsonLine } from './recall-output';
import { runReplay, serviceGroups } from './replay.command';
import { embeddedTarget } from './replay-targets';

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** A service that answers with no results but checks the request like the real one. */
function deps(tenants: Record<string, string[]> = { api: ['acme'] }): RecallDeps & {
  asked: RecallRequestInput[];
} {
  const asked: RecallRequestInput[] = [];
  const service = {
    embeddingModel: 'fake@1',
    recall: (input: RecallRequestInput) => {
      asked.push(input);
      return Promise.resolve({
        query: parseRecallRequest(input),
        results: [],
        embeddingModel: 'fake@1',
        timings: { embedMs: 1, searchMs: 2, rankMs: 0.5, totalMs: 3.5 },
      });
    },
  } as unknown as RecallService;
  return { service, asked, tenantsOf: (project) => Promise.resolve(tenants[project] ?? []) };
}

describe('runRecallBatch', () => {
  it('should answer every line in order and name the bad ones by line number', async () => {
    const d = deps();
    const out = new Collect();
    const errors = new Collect();
    const content = [
      '{"id": 1, "query": "token refresh", "phase": "implement", "k": 3}',
      '[1, 2]',
      '',
      '{"id": "three", "query": "x", "k": 0}',
      '{"id": "four", "query": "x", "project": "other"}',
      '{"id": "five", "query": "   "}',
    ].join('\r\n');
    const summary = await runRecallBatch(d, content, { project: 'api' }, out, errors);
    expect(summary).toEqual({ answered: 2, failed: 3 });
    const lines = out.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as RecallJsonLine);
    expect(lines.map((line) => line.id)).toEqual([1, null, 'three', 'four', 'five']);
    expect(lines[0]).toMatchObject({
      tenant: 'acme',
      project: 'api',
      phase: 'implement',
      k: 3,
      tier: 'all',
      embeddingModel: 'fake@1',
      results: [],
    });
    expect(lines[1]).toMatchObject({
      line: 2,
      error: expect.stringMatching(/^line 2: must be a JSON object/) as string,
    });
    expect(lines[2]).toMatchObject({
      line: 4,
      error: expect.stringMatching(/^line 4: k: /) as string,
    });
    // No tenant has data for project "other": nothing to search, not an error.
    expect(lines[3]).toMatchObject({ tenant: null, project: 'other', results: [] });
    expect(lines[4]).toMatchObject({ line: 6, error: 'line 6: query: is required' });
    expect(errors.text.trimEnd().split('\n')).toHaveLength(3);
    expect(d.asked.map((input) => input.tenantId)).toEqual(['acme', 'acme']);
  });

  it('should refuse to guess between several tenants', async () => {
    await expect(
      answerRecall(deps({ api: ['acme', 'globex'] }), { query: 'q' }, { project: 'api' }),
    ).rejects.toThrow('project api exists for several tenants (acme, globex): pass --tenant');
  });

  it('should require a project', async () => {
    await expect(answerRecall(deps(), { query: 'q' }, {})).rejects.toThrow(/^project: is required/);
  });

  it('should let outages through (the batch stops) rather than answer them line by line', async () => {
    const failing = deps();
    failing.service.recall = () => Promise.reject(new Error('connection refused'));
    await expect(
      runRecallBatch(failing, '{"query":"q"}', { project: 'api' }, new Collect(), new Collect()),
    ).rejects.toThrow('connection refused');
  });
});

describe('formatRecall', () => {
  it('should show rank, score, tier, the memories a result replaces and where it came from', () => {
    const text = formatRecall({
      id: null,
      query: 'token refresh',
      tenant: 'acme',
      project: 'api',
      phase: 'implement',
      k: 10,
      tier: 'all',
      embeddingModel: 'fake@1',
      tookMs: 3,
      results: [
        {
          rank: 1,
          tier: 'memories',
          id: 'm1',
          type: 'gotcha',
          text: 'Refresh behind\nthe mutex',
          score: 0.91234,
          scores: {} as never,
          explanation: '',
          provenance: {
            tenantId: 'acme',
            projectId: 'api',
            sessionIds: ['s1'],
            episodeIds: ['e1'],
            promptIds: [],
            eventIds: [],
            memoryId: 'm1',
            commitSha: null,
          },
          replaces: [
            {
              memoryId: 'm0',
              content: '[SUPERSEDED — a newer memory replaces it] Refresh\nunlocked',
              confidence: 0.4,
              reason: 'superseded',
            },
          ],
        },
      ],
    });
    expect(text).toBe(
      [
        'recall "token refresh" in api (phase implement):',
        ' 1. 0.9123  [memories/gotcha] Refresh behind the mutex',
        '    replaces: [SUPERSEDED — a newer memory replaces it] Refresh unlocked',
        '    from sessions s1 · episodes e1',
      ].join('\n'),
    );
  });
});

describe('engram recall (embedded, end to end)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-recall-'));
  let store: SqliteRetrievalStore;
  let stack: ReturnType<typeof createRecallStack>;
  let deps: RecallDeps;

  beforeAll(async () => {
    const config = parseConfig({});
    // Lexical only: the path of a machine without the model, and independent of it.
    const services = await startEmbeddedServices({
      config,
      dataDir: dir,
      sweepIntervalMs: 100,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
    });
    const target = await embeddedTarget(config, dir);
    try {
      const summary = await runReplay({
        config,
        content: readFileSync(DEMO_SESSION, 'utf8'),
        target,
        errors: new Collect(),
        wait: { groups: serviceGroups(config), timeoutMs: 60_000 },
      });
      if (summary.caughtUp !== true) throw new Error('the replay did not catch up');
    } finally {
      await target.close();
      await services.stop();
    }
    // A second reader of the data directory, as `engram recall` is beside `engram start`.
    store = SqliteRetrievalStore.open({ dataDir: dir });
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(store),
      embedder: LEXICAL_ONLY_EMBEDDER,
    });
    deps = embeddedRecallDeps(store, stack);
  });

  afterAll(async () => {
    await stack?.access.close();
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const QUERY = 'how do we fake time in the refresh tests?';
  const DEFAULTS = { project: 'acme/webshop', k: 10 };
  /**
   * The same ranking: the same results (tier, id, text, provenance) in the same order, with the
   * same scores and score components of the member shown — up to the recency prior's drift with
   * the wall clock between two calls.
   */
  const expectSameRanking = (actual: RecallJsonLine, expected: RecallJsonLine) => {
    const list = (line: RecallJsonLine) =>
      line.results.map((r) => ({ tier: r.tier, id: r.id, text: r.text, provenance: r.provenance }));
    expect(list(actual)).toEqual(list(expected));
    const close = (scores: object) =>
      Object.fromEntries(
        Object.entries(scores).map(([name, value]) => [
          name,
          typeof value === 'number' ? (expect.closeTo(value, 6) as number) : (value as unknown),
        ]),
      );
    expect(actual.results.map((r) => ({ score: r.score, ...r.scores }))).toEqual(
      expected.results.map((r) => close({ score: r.score, ...r.scores })),
    );
  };

  it('should answer from what `replay --wait` indexed, with the turn and its episode cited', async () => {
    // --no-track: the store stays as replayed, the tests below count their own accesses
    const line = await answerRecall(deps, { query: QUERY }, { ...DEFAULTS, track: false });
    expect(line.tenant).toBe('acme');
    // The distiller's memory of the user's correction, and the turn it came from: one
    // result per source (issue #23), so the turn and its episode are cited in the memory's
    // provenance instead of taking slots of their own to say the same.
    const memory = line.results.find((r) => r.tier === 'memories' && r.type === 'gotcha');
    expect(memory?.text).toMatch(/vitest fake timers/);
    expect(memory?.provenance).toMatchObject({
      sessionIds: ['demo-session-1'],
      episodeIds: [expect.any(String)],
    });
    expect(memory?.provenance.promptIds).toContain(2);
    // (other memories of the same episode may join the source too)
    expect(memory?.explanation).toMatch(
      /; one source with episodes \S+(, memories \S+)*, turns \S+/,
    );
    expect(line.results.filter((r) => r.provenance.promptIds.includes(2))).toEqual([memory]);
  });

  it('should give the same list for the same query twice with --no-track (issue #23)', async () => {
    const first = await answerRecall(deps, { query: QUERY }, { ...DEFAULTS, track: false });
    await stack.access.flush();
    const second = await answerRecall(deps, { query: QUERY }, { ...DEFAULTS, track: false });
    expect(first.results.length).toBeGreaterThan(1);
    expectSameRanking(second, first);
    const counts = (line: RecallJsonLine) => line.results.map((r) => r.memory?.accessCount);
    expect(counts(second)).toEqual(counts(first)); // nothing was counted
  });

  it('should rank the same however often a memory was returned before (tracking cannot flip a ranking)', async () => {
    const before = await answerRecall(deps, { query: QUERY }, { ...DEFAULTS, track: false });
    // The memory the query ranks last, returned (and counted) many times by a query of its own.
    const memories = before.results.filter((r) => r.tier === 'memories');
    const last = memories[memories.length - 1];
    expect(memories.length).toBeGreaterThan(1);
    for (let i = 0; i < 20; i += 1) {
      const tracked = await answerRecall(deps, { query: last.text }, DEFAULTS);
      expect(tracked.results.map((r) => r.id)).toContain(last.id);
      await stack.access.flush();
    }
    const after = await answerRecall(deps, { query: QUERY }, { ...DEFAULTS, track: false });
    const counted = after.results.find((r) => r.id === last.id)?.memory;
    expect(counted?.accessCount).toBeGreaterThanOrEqual((last.memory?.accessCount ?? 0) + 20);
    expectSameRanking(after, before);
  });
});
