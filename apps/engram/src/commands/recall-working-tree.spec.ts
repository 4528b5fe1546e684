import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  recallLineInWorkingTree,
  type RecallJsonLine,
  type RecallJsonResult,
} from './recall-output';

// `engram recall --dir`: an explicit search still shows a memory about deleted files, marked
// with SPEC §7's stale prefix (seed 002 §7 layer 1; the decision is libs/core's).

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-recall-tree-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'live.ts'), 'export {};\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function result(id: string, relatedFiles: string[] | null): RecallJsonResult {
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
    ...(relatedFiles !== null && {
      memory: { memoryId: id, relatedFiles } as unknown as RecallJsonResult['memory'],
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
});
