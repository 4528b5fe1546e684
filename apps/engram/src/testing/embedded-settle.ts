import type { EngramConfig } from '@engram/config';
import type { SqliteEventLog } from '@engram/embedded';
import { serviceGroups, waitForServices } from '../commands/replay.command';
import { embeddedTarget } from '../commands/replay-targets';

/**
 * For tests of embedded Engram: returns once the services have processed everything in the log
 * and stayed idle for `quietMs` — their timers (session end, idle episodes) have fired and what
 * those produced is processed too (`engram replay --wait` alone returns before the timers).
 */
export async function settleEmbedded(
  log: SqliteEventLog,
  dataDir: string,
  config: EngramConfig,
  { quietMs = 1_000, timeoutMs = 60_000 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ends = () =>
    JSON.stringify(log.topics().map((topic) => [topic.name, log.endOffsets(topic.name)]));
  const target = await embeddedTarget(config, dataDir);
  try {
    for (let previous = ends(); ;) {
      const caughtUp = await waitForServices(target, {
        groups: serviceGroups(config),
        timeoutMs: Math.max(0, deadline - Date.now()),
      });
      if (!caughtUp) throw new Error('the embedded services did not catch up in time');
      await new Promise((resolve) => setTimeout(resolve, quietMs));
      const current = ends();
      if (current === previous) return;
      if (Date.now() > deadline) throw new Error('the embedded services did not settle in time');
      previous = current;
    }
  } finally {
    await target.close();
  }
}
