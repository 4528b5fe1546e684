import { describe, expect, it } from 'vitest';
import { InvalidRecallRequestError } from './retrieval-errors';
import { DEFAULT_RECALL_K, MAX_RECALL_K, parseRecallRequest, recallTiers } from './recall-request';

const VALID = { tenantId: ' acme ', projectId: 'api', query: ' token refresh ' };

function fieldOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRecallRequestError) return error.field;
    throw error;
  }
  throw new Error('no error thrown');
}

describe('parseRecallRequest', () => {
  it('should apply the defaults: k 10, every tier, explore, stale penalised', () => {
    expect(parseRecallRequest(VALID)).toEqual({
      scope: { tenantId: 'acme', projectId: 'api' },
      query: 'token refresh',
      phase: 'explore',
      k: DEFAULT_RECALL_K,
      tiers: ['memories', 'episodes', 'turns'],
      memoryTypes: [],
      relatedFiles: [],
      temporal: null,
      stale: 'penalise',
      minConfidence: null,
      sessionId: null,
      track: true,
    });
  });

  it('should not track a recall that asks not to (--no-track, proto no_track)', () => {
    const base = { tenantId: 'acme', projectId: 'api', query: 'q' };
    expect(parseRecallRequest({ ...base, track: false }).track).toBe(false);
    expect(parseRecallRequest({ ...base, track: null }).track).toBe(true);
  });

  it('should map methodology phases and treat k = 0 as the default', () => {
    const query = parseRecallRequest({
      ...VALID,
      methodology: 'tdd',
      phase: 'green',
      k: 0,
      tier: 'Memories',
      memoryTypes: ['gotcha'],
      excludeStale: true,
    });
    expect(query).toMatchObject({
      phase: 'implement',
      k: DEFAULT_RECALL_K,
      tiers: ['memories'],
      memoryTypes: ['gotcha'],
      stale: 'exclude',
    });
    expect(parseRecallRequest({ ...VALID, phase: 'no-such-phase' }).phase).toBe('explore');
  });

  it('should name the offending field', () => {
    expect(fieldOf(() => parseRecallRequest({ ...VALID, tenantId: '' }))).toBe('tenantId');
    expect(fieldOf(() => parseRecallRequest({ ...VALID, projectId: undefined }))).toBe('projectId');
    expect(fieldOf(() => parseRecallRequest({ ...VALID, query: '   ' }))).toBe('query');
    expect(fieldOf(() => parseRecallRequest({ ...VALID, query: 'x'.repeat(4001) }))).toBe('query');
    expect(fieldOf(() => parseRecallRequest({ ...VALID, k: MAX_RECALL_K + 1 }))).toBe('k');
    expect(fieldOf(() => parseRecallRequest({ ...VALID, k: 2.5 }))).toBe('k');
    expect(fieldOf(() => parseRecallRequest({ ...VALID, tier: 'graph' }))).toBe('tier');
    expect(fieldOf(() => parseRecallRequest({ ...VALID, minConfidence: 1.5 }))).toBe(
      'minConfidence',
    );
    expect(fieldOf(() => parseRecallRequest({ ...VALID, memoryTypes: ['gotcha', 'rumour'] }))).toBe(
      'memoryTypes[1]',
    );
    expect(fieldOf(() => parseRecallRequest({ ...VALID, relatedFiles: [' '] }))).toBe(
      'relatedFiles',
    );
    expect(
      fieldOf(() => parseRecallRequest({ ...VALID, temporal: { mode: 'recent_sessions', n: 0 } })),
    ).toBe('recentSessions.n');
  });
});

describe('recallTiers', () => {
  it('should read all, nothing, or one tier', () => {
    expect(recallTiers(undefined)).toEqual(['memories', 'episodes', 'turns']);
    expect(recallTiers('all')).toEqual(['memories', 'episodes', 'turns']);
    expect(recallTiers('turns')).toEqual(['turns']);
  });
});
