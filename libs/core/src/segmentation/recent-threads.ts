import type { CrossThreadCandidate } from './cross-thread';

/**
 * The users' recent threads, as cross-thread linking candidates (seed 004 §2.3): the last few
 * user turns and the latest episode of each. Plain JSON per user (it lives in the segmenter's
 * compacted changelog, one record per user), bounded and deterministic: time only comes in as
 * the event times of the turns.
 */

const HOUR_MS = 60 * 60 * 1000;

export interface RecentThreadIndexOptions {
  /** Threads whose last activity is older than this (before the user's latest turn) go. */
  windowMs: number;
  /** At most this many threads per user; the least recently active go first. */
  maxThreadsPerUser: number;
  /** The last user turns kept per thread. */
  maxTurns: number;
}

export const DEFAULT_RECENT_THREAD_INDEX_OPTIONS: Readonly<RecentThreadIndexOptions> =
  Object.freeze({ windowMs: 24 * HOUR_MS, maxThreadsPerUser: 24, maxTurns: 5 });

/** One thread's activity. Plain JSON. */
export interface ThreadActivity {
  threadId: string;
  tenantId: string;
  userId: string | null;
  /** Event time of the thread's latest user turn (epoch millis). */
  lastActivityAt: number;
  /** The last user turns, oldest first. */
  recentTurns: string[];
  latestEpisodeId: string;
}

/** A user's threads, least recently active first (then by thread id): one changelog record. */
export interface UserThreadsState {
  tenantId: string;
  userId: string | null;
  threads: ThreadActivity[];
}

export interface RecentThreadTurn {
  threadId: string;
  tenantId: string;
  userId: string | null;
  at: number;
  text: string;
  episodeId: string;
}

/**
 * Eviction, per user and by event time: when a turn is recorded, the user's threads last active
 * more than `windowMs` before it go, then the least recently active (ties: the larger thread id)
 * beyond `maxThreadsPerUser`. A thread never moves between users (its first turn places it).
 */
export class RecentThreadIndex {
  private readonly options: RecentThreadIndexOptions;
  private readonly users = new Map<string, Map<string, ThreadActivity>>();
  /** threadId → user key. */
  private readonly userOf = new Map<string, string>();

  constructor(options: Partial<RecentThreadIndexOptions> = {}) {
    this.options = { ...DEFAULT_RECENT_THREAD_INDEX_OPTIONS, ...options };
  }

  /** The key of a user's record: tenant and user, unambiguous for any strings. */
  static userKey(tenantId: string, userId: string | null): string {
    return JSON.stringify([tenantId, userId]);
  }

  has(threadId: string): boolean {
    return this.userOf.has(threadId);
  }

  latestEpisodeOf(threadId: string): string | null {
    const user = this.userOf.get(threadId);
    return (user && this.users.get(user)?.get(threadId)?.latestEpisodeId) ?? null;
  }

  /** A user turn in a thread; returns the key of the user whose record changed. */
  record(turn: RecentThreadTurn): string {
    const key =
      this.userOf.get(turn.threadId) ?? RecentThreadIndex.userKey(turn.tenantId, turn.userId);
    let threads = this.users.get(key);
    if (!threads) {
      threads = new Map();
      this.users.set(key, threads);
    }
    let thread = threads.get(turn.threadId);
    if (!thread) {
      thread = {
        threadId: turn.threadId,
        tenantId: turn.tenantId,
        userId: turn.userId,
        lastActivityAt: turn.at,
        recentTurns: [],
        latestEpisodeId: turn.episodeId,
      };
      threads.set(turn.threadId, thread);
      this.userOf.set(turn.threadId, key);
    }
    thread.lastActivityAt = Math.max(thread.lastActivityAt, turn.at);
    thread.latestEpisodeId = turn.episodeId;
    thread.recentTurns.push(turn.text);
    if (thread.recentTurns.length > this.options.maxTurns) {
      thread.recentTurns.splice(0, thread.recentTurns.length - this.options.maxTurns);
    }
    this.evict(key, turn.at);
    return key;
  }

  /** Snapshots of the user's threads active within the window before `at` (none without a user). */
  candidates(tenantId: string, userId: string | null, at: number): CrossThreadCandidate[] {
    if (userId === null) return [];
    const result: CrossThreadCandidate[] = [];
    const threads = this.users.get(RecentThreadIndex.userKey(tenantId, userId));
    for (const thread of threads?.values() ?? []) {
      const inWindow = thread.lastActivityAt >= at - this.options.windowMs;
      if (!inWindow || thread.lastActivityAt > at) continue;
      result.push({ ...thread, recentTurns: [...thread.recentTurns] });
    }
    return result;
  }

  /** The user's record (copies), or null when the user has no thread left (a tombstone). */
  userState(key: string): UserThreadsState | null {
    const threads = this.users.get(key);
    if (!threads || threads.size === 0) return null;
    const sorted = [...threads.values()].sort(leastRecentFirst).map(copyThread);
    return { tenantId: sorted[0].tenantId, userId: sorted[0].userId, threads: sorted };
  }

  /** Puts back a user's record read from the changelog (re-applying the per-user cap). */
  restoreUser(state: UserThreadsState): void {
    const key = RecentThreadIndex.userKey(state.tenantId, state.userId);
    const threads = this.users.get(key) ?? new Map<string, ThreadActivity>();
    this.users.set(key, threads);
    for (const thread of state.threads) {
      threads.set(thread.threadId, copyThread(thread));
      this.userOf.set(thread.threadId, key);
    }
    this.cap(key);
  }

  /**
   * Evicts every user's threads last active more than `windowMs` before `now` (the stream time):
   * bounds memory for users who went quiet. Returns the keys of the users whose record changed.
   */
  prune(now: number): string[] {
    const changed: string[] = [];
    for (const [key, threads] of [...this.users]) {
      const before = threads.size;
      this.evict(key, now);
      if ((this.users.get(key)?.size ?? 0) !== before) changed.push(key);
    }
    return changed;
  }

  clear(): void {
    this.users.clear();
    this.userOf.clear();
  }

  private evict(key: string, now: number): void {
    const threads = this.users.get(key);
    if (!threads) return;
    for (const [threadId, thread] of threads) {
      if (thread.lastActivityAt < now - this.options.windowMs) {
        threads.delete(threadId);
        this.userOf.delete(threadId);
      }
    }
    this.cap(key);
  }

  private cap(key: string): void {
    const threads = this.users.get(key);
    if (!threads) return;
    const limit = Math.max(0, Math.floor(this.options.maxThreadsPerUser));
    if (threads.size > limit) {
      const surplus = [...threads.values()].sort(leastRecentFirst).slice(0, threads.size - limit);
      for (const thread of surplus) {
        threads.delete(thread.threadId);
        this.userOf.delete(thread.threadId);
      }
    }
    if (threads.size === 0) this.users.delete(key);
  }
}

/** Least recently active first; among equals the larger thread id first (it is evicted first). */
function leastRecentFirst(a: ThreadActivity, b: ThreadActivity): number {
  return (
    a.lastActivityAt - b.lastActivityAt ||
    (a.threadId < b.threadId ? 1 : a.threadId > b.threadId ? -1 : 0)
  );
}

function copyThread(thread: ThreadActivity): ThreadActivity {
  return { ...thread, recentTurns: [...thread.recentTurns] };
}
