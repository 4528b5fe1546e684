/**
 * A stage's committed changelog, per partition, as the bytes the log holds: restored from the
 * changelog the first time a partition is used, updated only when a transaction commits, and
 * forgotten when the partition goes (a rebalance) or when a failed commit may have happened (the
 * log is then the truth, and the next use restores it again). Every transaction decodes what it
 * touches, so an aborted one is simply forgotten. Shared by the observer's and distiller's stages.
 */
export class CommittedChangelog<R extends { partition: number }> {
  private readonly records = new Map<number, Map<string, Buffer>>();
  private readonly restored = new Set<number>();

  constructor(
    private readonly options: {
      /** The changelog's latest record per key, for these partitions. */
      restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
      decode: (value: Buffer) => R;
      /** A record that cannot be decoded is left out (and reported here). */
      onUnreadable: (key: string, error: unknown) => void;
    },
  ) {}

  /** Partitions whose records are in memory. */
  get partitions(): number[] {
    return [...this.restored];
  }

  /**
   * Restores the partition's records unless they are in memory; `onRestored` sees each record
   * that belongs to it (records of another partition — a changed partition count — are left out).
   */
  async ensure(partition: number, onRestored: (key: string, record: R) => void): Promise<void> {
    if (this.restored.has(partition)) return;
    const records = this.partitionRecords(partition);
    for (const [key, value] of await this.options.restore([partition])) {
      let record: R;
      try {
        record = this.options.decode(value);
      } catch (error) {
        this.options.onUnreadable(key, error);
        continue;
      }
      if (record.partition !== partition) continue;
      records.set(key, value);
      onRestored(key, record);
    }
    this.restored.add(partition);
  }

  get(partition: number, key: string): Buffer | undefined {
    return this.records.get(partition)?.get(key);
  }

  /** A committed write: the value, or null for a tombstone. */
  apply(partition: number, key: string, value: Buffer | null): void {
    const records = this.partitionRecords(partition);
    if (value === null) records.delete(key);
    else records.set(key, value);
  }

  forget(partition: number): void {
    this.restored.delete(partition);
    this.records.delete(partition);
  }

  private partitionRecords(partition: number): Map<string, Buffer> {
    let records = this.records.get(partition);
    if (!records) {
      records = new Map();
      this.records.set(partition, records);
    }
    return records;
  }
}
