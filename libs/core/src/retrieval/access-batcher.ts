import { compareText } from './ordering';
import { DEFAULT_RANKING_CONFIG, type AccessConfig } from './ranking-config';

/**
 * Access tracking (SPEC §7): every memory a recall returns gets accessCount + 1 and
 * lastAccessedAt = now. A recall must not wait for that write, and a hot memory returned by a
 * hundred recalls a second must not cost a hundred writes, so returns are coalesced here per
 * memory and written in batches by the adapter, by size or by age. Pure state: time comes in as
 * arguments; the adapter owns the timer and the (asynchronous) write.
 */

/** "This memory was returned" — routed by tenant and project (the adapter's index and filter). */
export interface AccessHit {
  tenantId: string;
  projectId: string;
  memoryId: string;
  /**
   * The memory's counts as the reader saw them (its record's, with any counter folded in), read
   * in the hit's scope. A store that keeps counters apart seeds a memory's first counter from
   * them instead of reading the record again; absent: the store reads it.
   */
  seen?: AccessCounts;
}

/** A returned memory as an access hit, with the counts it was read with. */
export function accessHitOf(
  scope: Pick<AccessHit, 'tenantId' | 'projectId'>,
  memory: { memoryId: string; accessCount: number; lastAccessedAt: number },
): AccessHit {
  const { memoryId, accessCount, lastAccessedAt } = memory;
  return {
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    memoryId,
    seen: { accessCount, lastAccessedAt },
  };
}

/** One coalesced write: add `increment` to accessCount, raise lastAccessedAt to at least this. */
export interface AccessUpdate extends AccessHit {
  increment: number;
  lastAccessedAt: number;
  /** When the oldest of these accesses was recorded (for flush-lag metrics). */
  firstRecordedAt: number;
}

export class AccessBatcher {
  private readonly options: AccessConfig;
  private readonly pending = new Map<string, AccessUpdate>();
  /** The smallest firstRecordedAt waiting (kept as updates merge: asked after every recall). */
  private oldest: number | null = null;

  constructor(options: Partial<AccessConfig> = {}) {
    this.options = { ...DEFAULT_RANKING_CONFIG.access, ...options };
  }

  /**
   * Records one recall's results at time `at`. A memory listed twice in one recall was returned
   * once: it counts once.
   */
  record(hits: readonly AccessHit[], at: number): void {
    const seen = new Set<string>();
    for (const hit of hits) {
      const key = keyOf(hit);
      if (seen.has(key)) continue;
      seen.add(key);
      this.merge({ ...hit, increment: 1, lastAccessedAt: at, firstRecordedAt: at });
    }
  }

  /** Puts back updates whose write failed, so a retry loses nothing (merging with newer ones). */
  requeue(updates: readonly AccessUpdate[]): void {
    for (const update of updates) this.merge({ ...update });
  }

  /** Distinct memories waiting. */
  get size(): number {
    return this.pending.size;
  }

  /** When the oldest waiting access was recorded; null when nothing waits. */
  oldestRecordedAt(): number | null {
    return this.oldest;
  }

  /** Flush when `maxPendingIds` memories wait or the oldest has waited `maxAgeMs`. */
  shouldFlush(now: number): boolean {
    if (this.pending.size === 0) return false;
    if (this.pending.size >= this.options.maxPendingIds) return true;
    const oldest = this.oldestRecordedAt();
    return oldest !== null && now - oldest >= this.options.maxAgeMs;
  }

  /** Everything waiting, sorted by tenant, project, memory id; the batcher is left empty. */
  drain(): AccessUpdate[] {
    const updates = [...this.pending.values()].sort(
      (a, b) =>
        compareText(a.tenantId, b.tenantId) ||
        compareText(a.projectId, b.projectId) ||
        compareText(a.memoryId, b.memoryId),
    );
    this.pending.clear();
    this.oldest = null;
    return updates;
  }

  /** `drain()` when `shouldFlush(now)`, else nothing. */
  takeDue(now: number): AccessUpdate[] {
    return this.shouldFlush(now) ? this.drain() : [];
  }

  private merge(update: AccessUpdate): void {
    this.oldest = Math.min(this.oldest ?? update.firstRecordedAt, update.firstRecordedAt);
    const key = keyOf(update);
    const current = this.pending.get(key);
    if (current === undefined) {
      this.pending.set(key, update);
      return;
    }
    current.increment += update.increment;
    current.lastAccessedAt = Math.max(current.lastAccessedAt, update.lastAccessedAt);
    current.firstRecordedAt = Math.min(current.firstRecordedAt, update.firstRecordedAt);
    if (update.seen) current.seen = effectiveAccess(update.seen, current.seen ?? null);
  }
}

/**
 * The stored counters after an update. lastAccessedAt never moves backwards: batches can land out
 * of order (a requeued batch after a newer one) and the later access must win.
 */
export function applyAccessUpdate(
  stored: { accessCount: number; lastAccessedAt: number },
  update: Pick<AccessUpdate, 'increment' | 'lastAccessedAt'>,
): { accessCount: number; lastAccessedAt: number } {
  return {
    accessCount: Math.max(0, stored.accessCount) + update.increment,
    lastAccessedAt: Math.max(stored.lastAccessedAt, update.lastAccessedAt),
  };
}

/** How often and how lately a memory was returned. */
export interface AccessCounts {
  accessCount: number;
  lastAccessedAt: number;
}

/**
 * A memory's counters where they are kept apart from its record (the distributed store counts
 * accesses in their own small documents, so that counting never rewrites a memory's vector):
 * the counted ones, seeded from the record's when first written, else the record's own. The
 * larger of each wins, so a record re-published with the counts it was read with (feedback)
 * neither doubles them nor moves them back.
 */
export function effectiveAccess(record: AccessCounts, counted: AccessCounts | null): AccessCounts {
  if (counted === null) {
    return { accessCount: record.accessCount, lastAccessedAt: record.lastAccessedAt };
  }
  return {
    accessCount: Math.max(record.accessCount, counted.accessCount),
    lastAccessedAt: Math.max(record.lastAccessedAt, counted.lastAccessedAt),
  };
}

function keyOf(hit: AccessHit): string {
  return JSON.stringify([hit.tenantId, hit.projectId, hit.memoryId]);
}
