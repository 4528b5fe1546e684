import { describe, expect, it } from 'vitest';
import {
  episodeInTemporal,
  memoryFilterRejection,
  memoryMatchesFilter,
  validateMemoryFilter,
  type MemoryFilter,
} from './memory-filter';
import { DEFAULT_RANKING_CONFIG as CONFIG } from './ranking-config';
import { InvalidRecallRequestError } from './retrieval-errors';
import { DAY, episode, memory, NOW, SCOPE, thrown } from './testing/fixtures';

const BASE: MemoryFilter = { ...SCOPE };

describe('memory filter', () => {
  it('should require tenant and project, naming the missing field', () => {
    expect(() => validateMemoryFilter({ projectId: 'p' })).toThrow('tenantId: is required');
    expect(() => validateMemoryFilter({ tenantId: 't' })).toThrow('projectId: is required');
    const error = thrown(() =>
      validateMemoryFilter({ tenantId: 't', projectId: 'p', minConfidence: 2 }),
    );
    expect(error).toBeInstanceOf(InvalidRecallRequestError);
    expect((error as InvalidRecallRequestError).field).toBe('minConfidence');
    expect(validateMemoryFilter({ tenantId: ' t ', projectId: 'p' })).toEqual({
      tenantId: 't',
      projectId: 'p',
    });
  });

  it('should match types, scopes and related files (absolute or relative paths)', () => {
    const m = memory({
      memoryId: 'm',
      memoryType: 'dead_end',
      scope: 'module',
      relatedFiles: ['src/auth/refresh.ts'],
    });
    expect(memoryFilterRejection(m, { ...BASE, types: ['gotcha'] }, CONFIG.stale)).toBe('type');
    expect(memoryFilterRejection(m, { ...BASE, scopes: ['global'] }, CONFIG.stale)).toBe('scope');
    expect(
      memoryFilterRejection(m, { ...BASE, relatedFiles: ['src/auth/session.ts'] }, CONFIG.stale),
    ).toBe('related_files');
    expect(
      memoryMatchesFilter(
        m,
        {
          ...BASE,
          types: ['dead_end'],
          scopes: ['module'],
          relatedFiles: ['/home/dev/repo/src/auth/refresh.ts'],
        },
        CONFIG.stale,
      ),
    ).toBe(true);
    expect(memoryMatchesFilter(m, { ...BASE, types: [], scopes: [] }, CONFIG.stale)).toBe(true); // empty = any
  });

  it('should compare minConfidence with the penalised confidence of a stale memory', () => {
    const stale = memory({ memoryId: 's', confidence: 0.9, staleAt: NOW });
    expect(memoryFilterRejection(stale, { ...BASE, minConfidence: 0.45 }, CONFIG.stale)).toBeNull(); // 0.45 ≥ 0.45
    expect(memoryFilterRejection(stale, { ...BASE, minConfidence: 0.5 }, CONFIG.stale)).toBe(
      'confidence',
    );
    expect(memoryFilterRejection(stale, { ...BASE, stale: 'exclude' }, CONFIG.stale)).toBe('stale');
  });

  it('should place memories in time by creation, and in sessions by creation or reinforcement', () => {
    const m = memory({
      memoryId: 'm',
      createdAt: NOW - 5 * DAY,
      sessionId: 's-old',
      provenanceSessionIds: ['s-2'],
    });
    const window = { kind: 'range', fromMs: NOW - 6 * DAY, toMs: NOW - 5 * DAY } as const;
    expect(memoryMatchesFilter(m, { ...BASE, temporal: window }, CONFIG.stale)).toBe(true);
    expect(
      memoryFilterRejection(
        m,
        { ...BASE, temporal: { ...window, toMs: NOW - 5 * DAY - 1 } },
        CONFIG.stale,
      ),
    ).toBe('temporal');
    expect(
      memoryMatchesFilter(
        m,
        { ...BASE, temporal: { kind: 'sessions', sessionIds: ['s-2'] } },
        CONFIG.stale,
      ),
    ).toBe(true);
    expect(
      memoryMatchesFilter(
        m,
        { ...BASE, temporal: { kind: 'sessions', sessionIds: ['s-9'] } },
        CONFIG.stale,
      ),
    ).toBe(false);
  });

  it('should place episodes in time by overlap, an open episode at its start', () => {
    const e = episode({ episodeId: 'e', startedAt: NOW - 10, endedAt: NOW + 10 });
    expect(episodeInTemporal(e, { kind: 'range', fromMs: NOW + 10, toMs: NOW + 20 })).toBe(true);
    expect(episodeInTemporal(e, { kind: 'range', fromMs: NOW + 11, toMs: NOW + 20 })).toBe(false);
    expect(
      episodeInTemporal({ ...e, endedAt: null }, { kind: 'range', fromMs: NOW, toMs: NOW + 20 }),
    ).toBe(false);
    expect(episodeInTemporal(e, { kind: 'sessions', sessionIds: ['session-1'] })).toBe(true);
  });
});
