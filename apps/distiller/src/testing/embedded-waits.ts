// Test support: waiting for embedded stages by what they committed, not for a time.
import type { SqliteEventLog } from '@engram/embedded';

export async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * What `engram replay --wait` waits for: every group committed up to the end of every topic it
 * consumes, twice in a row (ends read afresh, so work flows down the chain first). A stage
 * commits its outputs with its offsets, so a caught-up input means its outputs exist.
 */
export async function caughtUp(
  log: SqliteEventLog,
  groups: { groupId: string; topics: string[] }[],
  timeoutMs = 60_000,
): Promise<void> {
  const clean = () =>
    groups.every(({ groupId, topics }) =>
      topics.every((topic) => {
        const committed = log.committedOffsets(groupId, topic);
        return log.endOffsets(topic).every((end, p) => (committed.get(p) ?? 0) >= end);
      }),
    );
  let passes = 0;
  await until(() => {
    passes = clean() ? passes + 1 : 0;
    return passes >= 2;
  }, timeoutMs);
}
