import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import { causalExpansionFilter, mergeCausalExpansion, selectCausalFiles } from './causal-expansion';
import { rankByPriors } from './rank-memories';
import { memory, NOW, SCOPE } from './testing/fixtures';

describe('selectCausalFiles', () => {
  it('should keep neighbours over edges strictly heavier than 0.6, heaviest first, at most 5', () => {
    const edges = [
      { fileA: 'src/a.ts', fileB: 'src/n1.ts', weight: 0.61 },
      { fileA: 'src/n2.ts', fileB: 'src/a.ts', weight: 0.9 },
      { fileA: 'src/a.ts', fileB: 'src/at.ts', weight: 0.6 }, // not strictly above
      { fileA: 'src/a.ts', fileB: 'src/n3.ts', weight: 0.7 },
      { fileA: 'src/a.ts', fileB: 'src/n4.ts', weight: 0.7 },
      { fileA: 'src/a.ts', fileB: 'src/n5.ts', weight: 0.8 },
      { fileA: 'src/a.ts', fileB: 'src/n6.ts', weight: 0.65 },
      { fileA: 'src/x.ts', fileB: 'src/y.ts', weight: 0.99 }, // not about a seed file
    ];
    expect(
      selectCausalFiles(['src/a.ts'], edges, DEFAULT_RANKING_CONFIG).map((n) => [n.path, n.weight]),
    ).toEqual([
      ['src/n2.ts', 0.9],
      ['src/n5.ts', 0.8],
      ['src/n3.ts', 0.7],
      ['src/n4.ts', 0.7],
      ['src/n6.ts', 0.65],
    ]);
  });

  it('should use every seed file, keep the heaviest edge per neighbour and skip the seeds themselves', () => {
    const edges = [
      { fileA: 'src/a.ts', fileB: 'src/n.ts', weight: 0.7 },
      { fileA: 'src/b.ts', fileB: 'src/n.ts', weight: 0.8 },
      { fileA: 'src/a.ts', fileB: './src/b.ts', weight: 0.95 },
    ];
    expect(selectCausalFiles(['src/a.ts', 'src/b.ts'], edges, DEFAULT_RANKING_CONFIG)).toEqual([
      { path: 'src/n.ts', weight: 0.8, via: 'src/b.ts' },
    ]);
    expect(selectCausalFiles([], edges, DEFAULT_RANKING_CONFIG)).toEqual([]);
  });

  it('should describe the follow-up query', () => {
    expect(
      causalExpansionFilter(
        SCOPE,
        [{ path: 'src/n.ts', weight: 0.8, via: 'src/a.ts' }],
        DEFAULT_RANKING_CONFIG,
      ),
    ).toEqual({
      ...SCOPE,
      types: ['gotcha', 'pattern', 'error_pattern', 'dead_end'],
      relatedFiles: ['src/n.ts'],
      stale: 'penalise',
    });
  });
});

describe('mergeCausalExpansion', () => {
  it('should append new memories after the primary ones, flagged, deduplicated, at most 5', () => {
    const primary = rankByPriors(
      {
        memories: [memory({ memoryId: 'p1', confidence: 0.1 })],
        phase: 'implement',
        now: NOW,
      },
      DEFAULT_RANKING_CONFIG,
    );
    const expansion = ['p1', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c1'].map((memoryId) =>
      memory({ memoryId, confidence: 0.9 }),
    );
    const merged = mergeCausalExpansion(
      primary,
      expansion,
      'implement',
      NOW,
      DEFAULT_RANKING_CONFIG,
    );
    expect(merged.map((r) => r.memory.memoryId)).toEqual(['p1', 'c1', 'c2', 'c3', 'c4', 'c5']);
    expect(merged.map((r) => r.score.causalExpansion)).toEqual([
      false,
      true,
      true,
      true,
      true,
      true,
    ]);
  });
});
