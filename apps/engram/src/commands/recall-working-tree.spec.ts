import type { Typed } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  markedStaleByWorkingTree,
  RECALL_AGENT,
  recallFilesGoneManifest,
} from './files-gone-manifest';
import {
  recallLineInWorkingTree,
  type RecallJsonLine,
  type RecallJsonResult,
} from './recall-output';

// `engram recall --dir`: an explicit search still shows a memory about deleted files, marked
// with SPEC §7's stale prefix (seed 002 §7 layer 1; the decision is libs/core's), and tells the
// service with a files-gone FileManifest (the hook's, under the hook's turn for the root).

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-recall-tree-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'live.ts'), 'export {};\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function result(id: string, relatedFiles: string[] | null, stale = false): RecallJsonResult {
  return {
    rank: 1,
    tier: relatedFiles === null ? 'turns' : 'memories',
    id,
    type: relatedFiles === null ? 'turn' : 'gotcha',
    text: `text of ${id}`,
    score: 0.5,
    scores: {} as never,
    explanation: '',
    provenance: {} as never,
    replaces: [],
    ...(relatedFiles !== null && {
      memory: { memoryId: id, relatedFiles, stale } as unknown as RecallJsonResult['memory'],
    }),
  };
}

const line = (results: RecallJsonResult[]): RecallJsonLine => ({
  id: null,
  query: 'q',
  tenant: 'acme',
  project: 'api',
  phase: 'implement',
  k: 10,
  tier: 'all',
  embeddingModel: 'fake@1',
  tookMs: 1,
  results,
});

describe('recallLineInWorkingTree', () => {
  const answer = line([
    result('gone', ['src/deleted.ts']),
    result('live', ['src/live.ts', 'src/deleted.ts']),
    result('turn', null),
  ]);

  it('marks the memory whose every file is gone, keeps the rest as they were', () => {
    const checked = recallLineInWorkingTree(answer, dir);
    expect(checked.results.map((r) => r.text)).toEqual([
      `${DEFAULT_RANKING_CONFIG.stale.prefix} text of gone`,
      'text of live',
      'text of turn',
    ]);
  });

  it('checks nothing without a working tree', () => {
    expect(recallLineInWorkingTree(answer)).toBe(answer);
  });

  it('tells a gone memory the service did not know stale from one it did', () => {
    const marked = (results: RecallJsonResult[]) =>
      markedStaleByWorkingTree(results, recallLineInWorkingTree(line(results), dir).results);
    expect(marked(answer.results)).toBe(true);
    expect(marked([result('known', ['src/deleted.ts'], true)])).toBe(false);
    expect(marked([result('live', ['src/live.ts']), result('turn', null)])).toBe(false);
  });
});

describe('recallFilesGoneManifest', () => {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      stdio: 'ignore',
    });
  const T = Date.UTC(2026, 10, 27, 12);

  it('publishes the work tree’s files once per interval, as the hook would', async () => {
    git('init', '-q');
    writeFileSync(join(dir, 'src', 'gone.ts'), 'export {};\n');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    // The data dir lives in this work tree here: ignored, as a project would (manifests list the
    // untracked files git does not ignore).
    writeFileSync(join(dir, '.git', 'info', 'exclude'), '.data/\n');
    rmSync(join(dir, 'src', 'gone.ts'));
    const published: Typed[] = [];
    let closed = 0;
    const tell = (now: number) =>
      recallFilesGoneManifest({
        dir: join(dir, 'src'),
        dataDir: join(dir, '.data'),
        tenantId: 'acme',
        projectId: 'api',
        now,
        openPublisher: () =>
          Promise.resolve({
            publish: (events) => {
              published.push(...events);
              return Promise.resolve();
            },
            close: () => Promise.resolve(void (closed += 1)),
          }),
      });
    expect(await tell(T)).toMatch(/a FileManifest went to the service/);
    expect(await tell(T + 1_000)).toBe(null);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      type: 'FileManifest',
      tenantId: 'acme',
      projectId: 'api',
      agentId: RECALL_AGENT,
      timestamp: T,
      files: ['src/live.ts'],
    });
    expect(closed).toBe(1);
  });

  it('publishes nothing outside a git work tree, and says why a publish failed', async () => {
    const failing = () => Promise.reject(new Error('broker down'));
    const options = { dataDir: join(dir, '.data'), tenantId: 'acme', projectId: 'api' };
    expect(await recallFilesGoneManifest({ ...options, dir, openPublisher: failing })).toBe(null);
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    expect(await recallFilesGoneManifest({ ...options, dir, openPublisher: failing })).toBe(
      'engram recall: no FileManifest published (broker down)',
    );
  });
});
