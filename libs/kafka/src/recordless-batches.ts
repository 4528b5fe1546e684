import type { Consumer } from 'kafkajs';

/** A stretch of a partition the consumer moved past without a record for eachBatch. */
export interface RecordlessBatch {
  topic: string;
  partition: number;
  /** The consumer's position after it: the offset to commit. */
  nextOffset: string;
}

/**
 * Calls `passed` whenever the consumer moves past a fetch with no record for eachBatch: only
 * transaction markers, or the records of an aborted transaction. kafkajs resolves such a fetch
 * itself but commits it only with autoCommit. Our consumers commit by hand, each batch up to its
 * end; without this, a fetch of a lone marker would leave their group short of the end of a topic
 * written in transactions for good, and whatever compares the two (a distiller trigger waiting
 * for its inputs, `engram replay --wait`) would wait forever.
 */
export function onRecordlessBatches(
  consumer: Consumer,
  passed: (batch: RecordlessBatch) => void,
): void {
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    // Batches with records end here too, after eachBatch committed them; a truly empty fetch
    // emits nothing.
    if (payload.batchSize > 0) return;
    passed({
      topic: payload.topic,
      partition: payload.partition,
      nextOffset: (BigInt(payload.lastOffset) + 1n).toString(),
    });
  });
}
