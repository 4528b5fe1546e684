import { decodeStateJson } from '@engram/core';
import type { Logger } from '@nestjs/common';

// The committed state of a stage keyed by one input topic (the reflector's projects, the merge's
// memories): per owned partition, the latest changelog record of each key.

/** Partition → key → record. */
export type PartitionRecords<R> = Map<number, Map<string, R>>;

/** After a rebalance: forgets the partitions no longer owned (new ones restore on first use). */
export function keepOwned<R>(state: PartitionRecords<R>, owned: ReadonlySet<number>): void {
  for (const partition of [...state.keys()]) {
    if (!owned.has(partition)) state.delete(partition);
  }
}

/**
 * Reads one partition's records from the changelog, once: those `accept` takes (a record written
 * for this partition, of a version this code reads); an unreadable one is logged and skipped.
 */
export async function restorePartition<R>(
  state: PartitionRecords<R>,
  partition: number,
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>,
  accept: (record: R) => boolean,
  logger: Pick<Logger, 'error'>,
): Promise<void> {
  if (state.has(partition)) return;
  const records = new Map<string, R>();
  for (const [key, value] of await restore([partition])) {
    try {
      const record = decodeStateJson<R>(value);
      if (accept(record)) records.set(key, record);
    } catch (error) {
      logger.error(`unreadable changelog record ${key} skipped: ${String(error)}`);
    }
  }
  state.set(partition, records);
}
