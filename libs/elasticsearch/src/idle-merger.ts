import type { Client } from '@elastic/elasticsearch';
import {
  DEFAULT_IDLE_MERGE_POLICY,
  errorMessage,
  idleMergeDecision,
  type IdleMergePolicy,
  type IndexWatch,
} from '@engram/core';

export interface IdleMergerOptions {
  policy?: IdleMergePolicy;
  /** How often the indices are looked at (default 15 s). */
  checkMs?: number;
  clock?: () => number;
  log?: (line: string) => void;
}

/** A merge of a few hundred MB runs for minutes on two cores; give up waiting after this. */
const MERGE_DEADLINE_MS = 60 * 60 * 1000;

/** How often a running merge task is asked whether it has finished. */
const MERGE_POLL_MS = 1_000;

export interface IndexSegments {
  writes: number;
  segments: number;
}

/** Write counter and segment count of each existing index (primaries). */
export async function segmentsOf(
  client: Client,
  indices: readonly string[],
): Promise<Map<string, IndexSegments>> {
  const stats = await client.indices.stats({
    index: [...indices],
    metric: ['indexing', 'segments'],
  });
  const seen = new Map<string, IndexSegments>();
  for (const [name, index] of Object.entries(stats.indices ?? {})) {
    const primaries = index.primaries;
    seen.set(name, {
      writes: (primaries?.indexing?.index_total ?? 0) + (primaries?.indexing?.delete_total ?? 0),
      segments: primaries?.segments?.count ?? 0,
    });
  }
  return seen;
}

/**
 * Merges one index down to one segment; resolves when Elasticsearch has finished. The merge runs
 * as a task that is polled: a request that waited for it would be cut off by the client's
 * socket timeout (undici's headers timeout is the client's `requestTimeout`, 30 s, whatever a
 * single request asks for), and the client would then send the merge again.
 */
export async function mergeToOneSegment(
  client: Client,
  index: string,
  { pollMs = MERGE_POLL_MS, deadlineMs = MERGE_DEADLINE_MS } = {},
): Promise<void> {
  const started = await client.indices.forcemerge({
    index,
    max_num_segments: 1,
    wait_for_completion: false,
  });
  const taskId = (started as { task?: string }).task;
  if (taskId === undefined) return; // an 8.x server that merged in the request itself
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const task = await client.tasks.get({ task_id: taskId });
    if (task.completed) {
      if (task.error) throw new Error(`merge of ${index} failed: ${JSON.stringify(task.error)}`);
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`merge of ${index} still running after ${deadlineMs / 60_000} min`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * Watches the retrieval indices and merges each one to a single segment once it has been quiet
 * for a while (core `idleMergeDecision`): kNN walks one HNSW graph per segment, so a read-mostly
 * memory index answers several times faster merged. One merge at a time; a failed merge is
 * logged and tried again at a later look; stopping does not wait for a merge in progress
 * (Elasticsearch finishes it on its own).
 */
export class IdleMerger {
  readonly counters = { looks: 0, merges: 0, failures: 0 };
  private readonly watches = new Map<string, IndexWatch>();
  private readonly policy: IdleMergePolicy;
  private readonly clock: () => number;
  private readonly log: (line: string) => void;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private stopped = false;

  constructor(
    private readonly client: Client,
    private readonly indices: readonly string[],
    private readonly options: IdleMergerOptions = {},
  ) {
    this.policy = options.policy ?? DEFAULT_IDLE_MERGE_POLICY;
    this.clock = options.clock ?? Date.now;
    this.log = options.log ?? (() => undefined);
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), this.options.checkMs ?? 15_000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look at every index; merges those quiet long enough. Returns the indices it merged. */
  async check(): Promise<string[]> {
    if (this.busy || this.stopped) return [];
    this.busy = true;
    const merged: string[] = [];
    try {
      this.counters.looks += 1;
      const seen = await segmentsOf(this.client, this.indices);
      for (const [index, { writes, segments }] of seen) {
        const { watch, merge } = idleMergeDecision(
          this.watches.get(index),
          { writes, segments, now: this.clock() },
          this.policy,
        );
        this.watches.set(index, watch);
        if (!merge || this.stopped) continue;
        const started = this.clock();
        await mergeToOneSegment(this.client, index);
        this.counters.merges += 1;
        merged.push(index);
        this.log(`merged ${index} from ${segments} segments to 1 in ${this.clock() - started} ms`);
      }
    } catch (error) {
      if (!this.stopped) {
        this.counters.failures += 1;
        this.log(`idle merge failed, will look again: ${errorMessage(error)}`);
      }
    } finally {
      this.busy = false;
    }
    return merged;
  }
}
