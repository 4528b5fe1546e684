import { describe, expect, it } from 'vitest';
import { RecentThreadIndex, type UserThreadsState } from './recent-threads';

const HOUR = 60 * 60 * 1000;
const T0 = Date.UTC(2026, 2, 3, 9, 0, 0);

function turn(threadId: string, hours: number, userId: string | null = 'u1', text = threadId) {
  return {
    threadId,
    tenantId: 't',
    userId,
    at: T0 + hours * HOUR,
    text,
    episodeId: `${threadId}-e`,
  };
}

describe('RecentThreadIndex', () => {
  it("should offer the user's threads of the last 24 h, their last turns and latest episode", () => {
    const index = new RecentThreadIndex({ maxTurns: 2 });
    index.record(turn('a', 0, 'u1', 'one'));
    index.record(turn('a', 1, 'u1', 'two'));
    index.record({ ...turn('a', 2, 'u1', 'three'), episodeId: 'a-e2' });
    index.record(turn('b', 3, 'u2'));
    expect(index.candidates('t', 'u1', T0 + 7 * HOUR)).toEqual([
      {
        threadId: 'a',
        tenantId: 't',
        userId: 'u1',
        lastActivityAt: T0 + 2 * HOUR,
        recentTurns: ['two', 'three'],
        latestEpisodeId: 'a-e2',
      },
    ]);
    expect(index.candidates('t', 'u1', T0 + 27 * HOUR)).toEqual([]);
    expect(index.candidates('t', null, T0 + 7 * HOUR)).toEqual([]);
    expect(index.latestEpisodeOf('a')).toBe('a-e2');
  });

  it('should cap each user by event time: the least recently active thread goes first', () => {
    const index = new RecentThreadIndex({ maxThreadsPerUser: 2 });
    index.record(turn('x', 1));
    index.record(turn('y', 0));
    index.record(turn('z', 2));
    expect(index.has('y')).toBe(false);
    expect(
      index.userState(RecentThreadIndex.userKey('t', 'u1'))!.threads.map((t) => t.threadId),
    ).toEqual(['x', 'z']);
    // Threads idle for longer than the window before the user's turn go at once.
    index.record(turn('w', 30));
    expect(index.has('x') || index.has('z')).toBe(false);
  });

  it('should round-trip through its per-user records, and prune quiet users', () => {
    const index = new RecentThreadIndex();
    const key = index.record(turn('a', 0));
    index.record(turn('b', 1, 'u2'));
    const restored = new RecentThreadIndex();
    restored.restoreUser(JSON.parse(JSON.stringify(index.userState(key))) as UserThreadsState);
    expect(restored.candidates('t', 'u1', T0 + HOUR)).toEqual(
      index.candidates('t', 'u1', T0 + HOUR),
    );
    expect(index.prune(T0 + 24.5 * HOUR)).toEqual([key]);
    expect(index.userState(key)).toBeNull();
    expect(index.has('b')).toBe(true);
  });
});
