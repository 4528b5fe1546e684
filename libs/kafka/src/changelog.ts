import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';

/**
 * Reads the latest value of every key of a compacted changelog topic, for the given partitions,
 * up to the end of the log as of now (read_committed: aborted writes are never restored). A null
 * value (tombstone) removes the key. Used to restore a stage's state when it is assigned
 * partitions; nothing else may write those partitions meanwhile (the owner restores before it
 * processes, and its transactional producer has fenced any predecessor).
 */
export async function readChangelog(
  kafka: Kafka,
  topic: string,
  partitions: readonly number[],
  timeoutMs = 120_000,
): Promise<Map<string, Buffer>> {
  const latest = new Map<string, Buffer>();
  if (partitions.length === 0) return latest;
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, bigint>;
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    ends = new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
  } finally {
    await admin.disconnect();
  }
  const pending = new Set(partitions.filter((p) => (ends.get(p) ?? 0n) > 0n));
  if (pending.size === 0) return latest;

  const consumer = kafka.consumer({
    groupId: `engram-restore-${randomUUID()}`,
    readUncommitted: false,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`restoring ${topic} partitions ${[...pending].join(',')} timed out`)),
        timeoutMs,
      );
      // END_BATCH_PROCESS also fires for batches of control records only (transaction markers),
      // which never reach eachBatch: it is how we know the end of the log was reached.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (BigInt(payload.lastOffset) + 1n < (ends.get(payload.partition) ?? 0n)) return;
        pending.delete(payload.partition);
        if (pending.size === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
      consumer
        .run({
          eachBatch: ({ batch }) => {
            if (!partitions.includes(batch.partition)) return Promise.resolve();
            for (const message of batch.messages) {
              const key = message.key?.toString();
              if (key === undefined) continue;
              if (message.value === null) latest.delete(key);
              else latest.set(key, message.value);
            }
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return latest;
}
