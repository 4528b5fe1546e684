import { describe, expect, it } from 'vitest';
import { MisconfigurationError } from '../errors/engram-error';
import { DEFAULT_RANKING_CONFIG, rankingConfig } from './ranking-config';

describe('rankingConfig', () => {
  it('should hold the constants of SPEC §7 and seed 002 §7 by default', () => {
    const config = rankingConfig();
    expect(config.rrfK).toBe(20);
    expect(config.hybrid).toEqual({ relevance: 0.6, recency: 0.25, frequency: 0.15 });
    expect(config.recencyDecayDays).toBe(30);
    expect(config.hyde).toEqual({
      minStrongResults: 3,
      strongRelevance: 0.5,
      queryWeight: 0.4,
      hypotheticalWeight: 0.6,
    });
    expect(config.injection).toMatchObject({
      maxResults: 4,
      minConfidence: 0.65,
      minAccessCount: 2,
    });
    expect(config.injection.types).toEqual([
      'gotcha',
      'error_pattern',
      'dead_end',
      'e2e_observation',
    ]);
    expect(config.causal).toMatchObject({ minEdgeWeight: 0.6, maxFiles: 5 });
    expect(config.stale.prefix).toBe('[STALE — file no longer exists]');
    expect(config.sequence).toMatchObject({ minRelevance: 0.5, overFetchFactor: 2 });
  });

  it('should merge overrides per section and phase weights per row', () => {
    const config = rankingConfig({
      rrfK: 10,
      hybrid: { recency: 0.1 },
      phaseWeights: { implement: { gotcha: 2 } },
    });
    expect(config.rrfK).toBe(10);
    expect(config.hybrid).toEqual({ relevance: 0.6, recency: 0.1, frequency: 0.15 });
    expect(config.phaseWeights.implement.gotcha).toBe(2);
    expect(config.phaseWeights.implement.dead_end).toBe(1.3);
    expect(config.phaseWeights.define).toEqual(DEFAULT_RANKING_CONFIG.phaseWeights.define);
    expect(DEFAULT_RANKING_CONFIG.phaseWeights.implement.gotcha).toBe(1.5);
  });

  it.each([
    [{ rrfK: 0 }, 'rrfK'],
    [{ hybrid: { relevance: -0.1 } }, 'hybrid.relevance'],
    [{ recencyDecayDays: Number.NaN }, 'recencyDecayDays'],
    [{ stale: { penalty: 1.5 } }, 'stale.penalty'],
    [{ hyde: { queryWeight: 0, hypotheticalWeight: 0 } }, 'hyde (sum of weights)'],
    [{ injection: { maxResults: 2.5 } }, 'injection.maxResults'],
    [{ phaseWeights: { reflect: { gotcha: -1 } } }, 'phaseWeights.reflect.gotcha'],
    [
      {
        context: {
          priority: [
            'memory',
            'memory',
            'work_state',
            'current_thread',
            'workflow_recipe',
          ] as const,
        },
      },
      'context.priority',
    ],
  ] as const)('should refuse %j, naming %s', (overrides, key) => {
    expect(() => rankingConfig(overrides)).toThrow(MisconfigurationError);
    expect(() => rankingConfig(overrides)).toThrow(`ranking config ${key}:`);
  });
});
