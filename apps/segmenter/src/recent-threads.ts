import type { CrossThreadCandidate } from '@engram/core';

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_TURNS = 5;
const PRUNE_EVERY = 1_000;

interface ThreadActivity extends CrossThreadCandidate {
  recentTurns: string[];
  latestEpisodeId: string;
}

/**
 * The users' threads of the last 24 h, as cross-thread linking candidates (seed 004 §2.3): the
 * last few user turns and the latest episode of each. Kept per instance and not persisted: after
 * a restart or a rebalance, links to threads seen before it are not proposed (SPEC §4.3 allows a
 * missed link; a wrong one is worse).
 */
export class RecentThreads {
  private readonly threads = new Map<string, ThreadActivity>();
  private sincePrune = 0;

  constructor(private readonly windowMs = DAY_MS) {}

  has(threadId: string): boolean {
    return this.threads.has(threadId);
  }

  /** A user turn in a thread. */
  record(turn: {
    threadId: string;
    tenantId: string;
    userId: string | null;
    at: number;
    text: string;
    episodeId: string;
  }): void {
    let thread = this.threads.get(turn.threadId);
    if (!thread) {
      thread = {
        ...turn,
        lastActivityAt: turn.at,
        recentTurns: [],
        latestEpisodeId: turn.episodeId,
      };
      this.threads.set(turn.threadId, thread);
    }
    thread.lastActivityAt = Math.max(thread.lastActivityAt, turn.at);
    thread.latestEpisodeId = turn.episodeId;
    thread.recentTurns.push(turn.text);
    if (thread.recentTurns.length > MAX_TURNS) thread.recentTurns.shift();
    this.sincePrune += 1;
    if (this.sincePrune >= PRUNE_EVERY) this.prune(turn.at);
  }

  /** Snapshots of the user's threads active within the window before `at`. */
  candidates(tenantId: string, userId: string | null, at: number): CrossThreadCandidate[] {
    if (userId === null) return [];
    const result: CrossThreadCandidate[] = [];
    for (const thread of this.threads.values()) {
      if (thread.tenantId !== tenantId || thread.userId !== userId) continue;
      if (thread.lastActivityAt < at - this.windowMs || thread.lastActivityAt > at) continue;
      result.push({ ...thread, recentTurns: [...thread.recentTurns] });
    }
    return result;
  }

  clear(): void {
    this.threads.clear();
  }

  latestEpisodeOf(threadId: string): string | null {
    return this.threads.get(threadId)?.latestEpisodeId ?? null;
  }

  private prune(now: number): void {
    this.sincePrune = 0;
    for (const [threadId, thread] of this.threads) {
      if (thread.lastActivityAt < now - this.windowMs) this.threads.delete(threadId);
    }
  }
}
