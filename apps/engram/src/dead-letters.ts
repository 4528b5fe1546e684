import {
  deadLetterId,
  deadLetterView,
  isDeadLetterTopic,
  type DeadLetterRecord,
  type DeadLetterView,
} from '@engram/core';
import type { SqliteEventLog } from '@engram/embedded';

// The dead letters of a log for `engram dlq` and `engram replay --wait`: read every `<topic>.dlq`,
// and redrive one (republish it to its source topic, once).

/** Topic (compacted, keyed by dead-letter id) that records which dead letters were redriven. */
export const REDRIVEN_TOPIC = 'engram.dlq.redriven';

export interface DeadLetterStore {
  /** End offset per partition of every dead-letter topic. */
  ends(): Promise<Map<string, number[]>>;
  /** Records of one dead-letter topic's partition from `from` on. */
  read(topic: string, partition: number, from: number, max: number): Promise<DeadLetterRecord[]>;
  /** The ids of the dead letters redriven so far. */
  redriven(): Promise<Set<string>>;
  /**
   * Republishes the dead letter's record (key, value, as it was) to `to`, and records it as
   * redriven; `already` when it was redriven before (nothing published).
   */
  redrive(record: DeadLetterRecord, to: string): Promise<'redriven' | 'already'>;
  close(): Promise<void>;
}

/** Every dead letter appended after `since` (end offsets taken earlier), oldest first per topic. */
export async function deadLettersSince(
  store: DeadLetterStore,
  since: ReadonlyMap<string, number[]>,
  max = 100_000,
): Promise<DeadLetterRecord[]> {
  const records: DeadLetterRecord[] = [];
  for (const [topic, ends] of await store.ends()) {
    for (let partition = 0; partition < ends.length; partition++) {
      const from = since.get(topic)?.[partition] ?? 0;
      if (ends[partition] > from) {
        records.push(...(await store.read(topic, partition, from, max - records.length)));
      }
      if (records.length >= max) return records;
    }
  }
  return records;
}

/** Every dead letter with whether it was redriven, oldest first per topic. */
export async function listDeadLetters(
  store: DeadLetterStore,
  filter: { topic?: string } = {},
): Promise<{ record: DeadLetterRecord; view: DeadLetterView; redriven: boolean }[]> {
  const redriven = await store.redriven();
  const records = await deadLettersSince(store, new Map());
  return records
    .filter(
      (record) =>
        !filter.topic || record.topic === filter.topic || record.topic === `${filter.topic}.dlq`,
    )
    .map((record) => ({
      record,
      view: deadLetterView(record),
      redriven: redriven.has(deadLetterId(record)),
    }));
}

/** The dead letters of the embedded log. */
export function embeddedDeadLetters(log: SqliteEventLog): DeadLetterStore {
  const ensureMarkers = () => {
    if (!log.topic(REDRIVEN_TOPIC)) log.ensureTopic(REDRIVEN_TOPIC, 1, { compacted: true });
  };
  const redriven = (): Set<string> =>
    log.topic(REDRIVEN_TOPIC)
      ? new Set(log.latestByKey(REDRIVEN_TOPIC, [0]).keys())
      : new Set<string>();
  return {
    ends: () =>
      Promise.resolve(
        new Map(
          log
            .topics()
            .filter((topic) => isDeadLetterTopic(topic.name))
            .map((topic) => [topic.name, log.endOffsets(topic.name)]),
        ),
      ),
    read: (topic, partition, from, max) =>
      Promise.resolve(
        log.read(topic, partition, from, max).map((record) => ({
          topic: record.topic,
          partition: record.partition,
          offset: record.offset,
          key: record.key,
          value: record.value,
          headers: record.headers,
          timestamp: record.timestamp,
        })),
      ),
    redriven: () => Promise.resolve(redriven()),
    redrive(record, to) {
      ensureMarkers();
      const id = deadLetterId(record);
      let outcome: 'redriven' | 'already' = 'already';
      // One transaction: the republished record and its marker are stored together or not at all.
      log.transaction(() => {
        if (redriven().has(id)) return;
        log.append(to, [{ key: record.key, value: record.value }]);
        log.append(REDRIVEN_TOPIC, [
          { key: id, value: JSON.stringify({ id, to, at: new Date().toISOString() }) },
        ]);
        outcome = 'redriven';
      });
      return Promise.resolve(outcome);
    },
    close: () => Promise.resolve(),
  };
}
