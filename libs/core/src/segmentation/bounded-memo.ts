/**
 * A memo of a pure function of a string key whose memory stays flat on any input: at most
 * `maxEntries` entries (the memo is emptied when full — cheaper than LRU bookkeeping on every hit,
 * and a hot vocabulary refills it at once), and keys longer than `maxKeyLength` are computed
 * without being remembered (they are rare, seldom repeat, and would make the bound a bound on
 * entries but not on bytes).
 */
export class BoundedMemo<V> {
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly compute: (key: string) => V,
    readonly maxEntries: number,
    readonly maxKeyLength: number,
  ) {
    if (!(maxEntries >= 1) || !(maxKeyLength >= 0)) {
      throw new RangeError('BoundedMemo needs maxEntries ≥ 1 and maxKeyLength ≥ 0');
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** compute(key), remembered when the key is short enough. */
  get(key: string): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = this.compute(key);
      if (key.length <= this.maxKeyLength) {
        if (this.entries.size >= this.maxEntries) this.entries.clear();
        this.entries.set(key, value);
      }
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
