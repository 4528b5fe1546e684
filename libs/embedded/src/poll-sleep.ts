/**
 * The pause of an embedded poll loop between reads, cut short when records are appended (the
 * log's onAppend) or the loop stops: both the exactly-once processor and the sink consumer wait
 * on it, so a new record is read at once rather than after the poll interval.
 */
export class PollSleep {
  private readonly sleepers = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  /** Ends every pause in progress. */
  wakeAll(): void {
    for (const wake of [...this.sleepers]) wake();
  }
}
