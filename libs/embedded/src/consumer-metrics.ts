import { processMetrics, type LagReading } from '@engram/metrics';
import type { SqliteEventLog } from './sqlite-event-log';

/**
 * Puts an embedded consumer in the process's metrics until the returned function is called: its
 * lag per partition (the log's end offset minus the group's next offset, read at each scrape)
 * and the readiness check `consumer <group>` (running, on an open log).
 */
export function watchEmbeddedConsumer(
  log: SqliteEventLog,
  groupId: string,
  positions: ReadonlyMap<string, readonly number[]>,
  running: () => boolean,
): () => void {
  const metrics = processMetrics();
  const removeLag = metrics.watchLag(() => embeddedLag(log, groupId, positions));
  const removeCheck = metrics.readiness.add(`consumer ${groupId}`, () => running() && log.isOpen);
  return () => {
    removeLag();
    removeCheck();
  };
}

function embeddedLag(
  log: SqliteEventLog,
  groupId: string,
  positions: ReadonlyMap<string, readonly number[]>,
): LagReading[] {
  if (!log.isOpen) return [];
  return [...positions].flatMap(([topic, nextOffsets]) => {
    const ends = log.endOffsets(topic);
    return nextOffsets.map((next, partition) => ({
      group: groupId,
      topic,
      partition,
      lag: Math.max(0, (ends[partition] ?? next) - next),
    }));
  });
}
