import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseConfig } from '@engram/config';
import { parseRecallRequest, type RecallRequestInput } from '@engram/core';
import { SqliteRetrievalStore } from '@engram/embedded';
import { describe, expect, it } from 'vitest';
import {
  createEmbeddedRecallStack,
  LEXICAL_ONLY_EMBEDDER,
} from '../../../retrieval/src/retrieval.embedded';
import type { RecallService } from '../../../retrieval/src/recall.service';
import { startEmbeddedServices } from '../embedded-services';
import { DEMO_SESSION } from './demo.command';
import {
  answerRecall,
  embeddedRecallDeps,
  formatRecall,
  runRecallBatch,
  type RecallDeps,
  type RecallJsonLine,
} from './recall.command';
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
  it('should show rank, score, tier and where each result came from', () => {
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
        },
      ],
    });
    expect(text).toBe(
      [
        'recall "token refresh" in api (phase implement):',
        ' 1. 0.9123  [memories/gotcha] Refresh behind the mutex',
        '    from sessions s1 · episodes e1',
      ].join('\n'),
    );
  });
});

describe('engram recall (embedded, end to end)', () => {
  it('should answer from what `replay --wait` indexed, with the turn and its episode cited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-recall-'));
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
      expect(summary.caughtUp).toBe(true);
      // A second reader of the data directory, as `engram recall` is beside `engram start`.
      const store = SqliteRetrievalStore.open({ dataDir: dir });
      const stack = createEmbeddedRecallStack({ store, embedder: LEXICAL_ONLY_EMBEDDER });
      try {
        const line = await answerRecall(
          embeddedRecallDeps(store, stack),
          { query: 'how do we fake time in the refresh tests?' },
          { project: 'acme/webshop', k: 10 },
        );
        expect(line.tenant).toBe('acme');
        // The distiller's memory of the user's correction, and the turn it came from.
        const memory = line.results.find((r) => r.tier === 'memories' && r.type === 'gotcha');
        expect(memory?.text).toMatch(/vitest fake timers/);
        const cited = line.results.find((r) => r.tier === 'turns');
        expect(cited?.text).toMatch(/vitest fake timers/);
        expect(cited?.provenance).toMatchObject({
          sessionIds: ['demo-session-1'],
          promptIds: [2],
          episodeIds: [expect.any(String)],
        });
      } finally {
        await stack.access.close();
        store.close();
      }
    } finally {
      await target.close();
      await services.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
