import { describe, expect, it } from 'vitest';
import { InvalidRecallRequestError } from './retrieval-errors';
import { thrown } from './testing/fixtures';
import { recentSessionIds, resolveTemporalMode, validateTemporalMode } from './temporal';

describe('temporal modes', () => {
  it('should resolve time_window to an inclusive range', () => {
    expect(resolveTemporalMode({ mode: 'time_window', fromMs: 100, toMs: 200 })).toEqual({
      kind: 'range',
      fromMs: 100,
      toMs: 200,
    });
  });

  it('should resolve around_event to time ± window', () => {
    expect(resolveTemporalMode({ mode: 'around_event', timeMs: 1_000, windowMs: 300 })).toEqual({
      kind: 'range',
      fromMs: 700,
      toMs: 1_300,
    });
  });

  it('should resolve recent_sessions(n) to the n most recently active distinct sessions', () => {
    const sessions = [
      { sessionId: 'a', lastActivityAt: 10 },
      { sessionId: 'b', lastActivityAt: 30 },
      { sessionId: 'a', lastActivityAt: 40 },
      { sessionId: 'c', lastActivityAt: 30 },
      { sessionId: 'd', lastActivityAt: 5 },
    ];
    expect(resolveTemporalMode({ mode: 'recent_sessions', n: 3 }, sessions)).toEqual({
      kind: 'sessions',
      sessionIds: ['a', 'b', 'c'],
    });
    expect(recentSessionIds(sessions, 10)).toEqual(['a', 'b', 'c', 'd']);
    expect(() => resolveTemporalMode({ mode: 'recent_sessions', n: 1 })).toThrow(RangeError);
  });

  it.each([
    [{ mode: 'recent_sessions', n: 0 }, 'recentSessions.n'],
    [{ mode: 'recent_sessions', n: 1.5 }, 'recentSessions.n'],
    [{ mode: 'time_window', fromMs: 5, toMs: 4 }, 'timeWindow'],
    [{ mode: 'time_window', fromMs: Number.NaN, toMs: 4 }, 'timeWindow.fromMs'],
    [{ mode: 'around_event', timeMs: 5, windowMs: -1 }, 'aroundEvent.windowMs'],
  ] as const)('should refuse %j naming %s', (mode, field) => {
    const error = thrown(() => validateTemporalMode(mode));
    expect(error).toBeInstanceOf(InvalidRecallRequestError);
    expect((error as InvalidRecallRequestError).field).toBe(field);
  });
});
