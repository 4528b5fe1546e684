import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import {
  injectionFilter,
  injectsForTool,
  selectInjections,
  type InjectionRequest,
} from './proactive-injection';
import { InvalidRecallRequestError } from './retrieval-errors';
import { DAY, memory, NOW, SCOPE } from './testing/fixtures';

const FILE = 'src/auth/refresh.ts';

/** A memory that passes every rule; tests break one rule at a time. */
function eligible(memoryId: string, overrides: Partial<Memory> = {}): Memory {
  return memory({
    memoryId,
    memoryType: 'gotcha',
    relatedFiles: [FILE],
    confidence: 0.8,
    accessCount: 2,
    ...overrides,
  });
}

function request(
  candidates: InjectionRequest['candidates'],
  extra: Partial<InjectionRequest> = {},
): InjectionRequest {
  return { scope: SCOPE, filePath: FILE, phase: 'implement', now: NOW, candidates, ...extra };
}

describe('selectInjections', () => {
  it('should inject at most four, best first, and say why the rest were left out', () => {
    const candidates = ['a', 'b', 'c', 'd', 'e'].map((id, index) =>
      eligible(id, { confidence: 0.95 - index * 0.05 }),
    );
    const selection = selectInjections(request(candidates), DEFAULT_RANKING_CONFIG);
    expect(selection.memories.map((m) => m.memory.memoryId)).toEqual(['a', 'b', 'c', 'd']);
    expect(selection.rejected).toEqual([{ memoryId: 'e', reason: 'over_limit' }]);
  });

  it('should apply each rule of seed 002 (edge cases at the thresholds)', () => {
    const selection = selectInjections(
      request([
        eligible('at-threshold', { confidence: 0.65 }),
        eligible('below-threshold', { confidence: 0.6499 }),
        eligible('seen-once', { accessCount: 1 }),
        eligible('verified-new', { accessCount: 0, userVerified: true }),
        eligible('stale', { staleAt: NOW - DAY, userVerified: true, confidence: 1 }),
        eligible('decision', { memoryType: 'decision' }),
        eligible('other-file', { relatedFiles: ['src/auth/session.ts'] }),
        eligible('other-tenant', { tenantId: 'tenant-b' }),
      ]),
      DEFAULT_RANKING_CONFIG,
    );
    expect(selection.memories.map((m) => m.memory.memoryId).sort()).toEqual([
      'at-threshold',
      'verified-new',
    ]);
    expect(Object.fromEntries(selection.rejected.map((r) => [r.memoryId, r.reason]))).toEqual({
      'below-threshold': 'low_confidence',
      'seen-once': 'unproven',
      stale: 'stale',
      decision: 'type',
      'other-file': 'not_about_file',
      'other-tenant': 'out_of_scope',
    });
  });

  it('should accept every injectable type and match an absolute path to a relative one', () => {
    const types = ['gotcha', 'error_pattern', 'dead_end', 'e2e_observation'] as const;
    const selection = selectInjections(
      request(
        types.map((memoryType) => eligible(memoryType, { memoryType })),
        { filePath: '/home/dev/repo/src/auth/refresh.ts' },
      ),
      DEFAULT_RANKING_CONFIG,
    );
    expect(selection.memories).toHaveLength(4);
  });

  it('should rank by phase weight: a dead end outranks a gotcha while refining', () => {
    const candidates = [eligible('gotcha'), eligible('dead', { memoryType: 'dead_end' })];
    expect(
      selectInjections(request(candidates, { phase: 'refine' }), DEFAULT_RANKING_CONFIG).memories[0]
        .memory.memoryId,
    ).toBe('dead'); // 1.4 vs 1.2
    expect(
      selectInjections(request(candidates, { phase: 'implement' }), DEFAULT_RANKING_CONFIG)
        .memories[0].memory.memoryId,
    ).toBe('gotcha'); // 1.5 vs 1.3
  });

  it('should cap a larger requested limit at four and honour a smaller one', () => {
    const candidates = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => eligible(id));
    expect(
      selectInjections(request(candidates, { limit: 10 }), DEFAULT_RANKING_CONFIG).memories,
    ).toHaveLength(4);
    expect(
      selectInjections(request(candidates, { limit: 1 }), DEFAULT_RANKING_CONFIG).memories,
    ).toHaveLength(1);
  });

  it('should render seed 002 block grouped by type with short ids, and nothing when empty', () => {
    const selection = selectInjections(
      request([
        eligible('e2e00000-1', {
          memoryType: 'e2e_observation',
          content: 'wait 300 ms after login',
        }),
        eligible('gotcha00-1', { content: 'refresh needs the mutex' }),
      ]),
      DEFAULT_RANKING_CONFIG,
    );
    expect(selection.rendered).toBe(
      '---\n**Memory context for this file:**\n' +
        '⚠️ Gotcha [gotcha00]: refresh needs the mutex\n' +
        '📱 E2E [e2e00000]: wait 300 ms after login',
    );
    expect(selectInjections(request([]), DEFAULT_RANKING_CONFIG).rendered).toBe('');
  });

  it('should refuse a request without scope or file', () => {
    expect(() =>
      selectInjections(
        request([], { scope: { tenantId: '', projectId: 'p' } }),
        DEFAULT_RANKING_CONFIG,
      ),
    ).toThrow(InvalidRecallRequestError);
    expect(() => selectInjections(request([], { filePath: ' ' }), DEFAULT_RANKING_CONFIG)).toThrow(
      'filePath: is required',
    );
  });
});

describe('injection helpers', () => {
  it('should trigger on Read and Edit only', () => {
    expect(injectsForTool('Read', DEFAULT_RANKING_CONFIG)).toBe(true);
    expect(injectsForTool('Edit', DEFAULT_RANKING_CONFIG)).toBe(true);
    expect(injectsForTool('Bash', DEFAULT_RANKING_CONFIG)).toBe(false);
  });

  it('should describe the store query with stale memories excluded', () => {
    expect(injectionFilter(SCOPE, FILE, DEFAULT_RANKING_CONFIG)).toEqual({
      ...SCOPE,
      types: ['gotcha', 'error_pattern', 'dead_end', 'e2e_observation'],
      relatedFiles: [FILE],
      minConfidence: 0.65,
      stale: 'exclude',
    });
  });
});
