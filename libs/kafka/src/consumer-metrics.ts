import { processMetrics } from '@engram/metrics';
import type { Batch, Consumer } from 'kafkajs';

/**
 * Adds the readiness check `consumer <group>` (libs/metrics): ready from the consumer's first
 * group join until it crashes or stops; again from its next join. Returns the function that removes the check.
 */
export function consumerReadiness(consumer: Consumer, groupId: string): () => void {
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  // A crash leaves the group (kafkajs rejoins when it restarts the consumer).
  consumer.on(consumer.events.CRASH, () => (joined = false));
  consumer.on(consumer.events.STOP, () => (joined = false));
  return processMetrics().readiness.add(`consumer ${groupId}`, () => joined);
}

/**
 * The partition's lag after `batch`: its high watermark minus the batch's last offset. Called
 * after the commit, so it never throws: a metric must not fail (and replay) a committed batch.
 */
export function recordBatchLag(groupId: string, batch: Batch): void {
  try {
    const lag = Number(batch.offsetLag());
    if (!Number.isFinite(lag)) return;
    const { topic, partition } = batch;
    processMetrics().recordLag({ group: groupId, topic, partition, lag: Math.max(0, lag) });
  } catch {
    // no lag reading for this batch (a batch without a high watermark)
  }
}
