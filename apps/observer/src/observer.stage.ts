import type { LifecycleEvent, Typed } from '@engram/contracts';
import { codecOnTopic, contractCodec } from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  RawStageOutput,
  StageOutput,
  TopicCodec,
} from '@engram/core';
import { emptyGraphBatch, isEmptyGraphBatch, type ObserverGraphBatch } from '@engram/core';
import { endedSessionExpired } from '@engram/core';
import { Logger } from '@nestjs/common';
import { ObserverCommittedState } from './observer-committed-state';
import { ObserverEventHandler } from './observer-event-handler';
import { encodeRecord, endedSessionKey, scratchpadKey, sessionKey } from './observer-records';
import type { ObserverStageOptions, ObserverTopics } from './observer-stage-options';
import {
  Work,
  type ObserverCounters,
  type SessionIndexEntry,
  type StagedWrite,
  type WorkingSession,
} from './observer-work';
import { ObserverWorkingRecords } from './observer-working-records';
import { isEmptyProjectWork, projectWorkCodec, type ProjectWork } from './project-work';
import { addFactRows } from './session-facts';

export {
  DEFAULT_OBSERVER_TOPICS,
  type ObserverCodecs,
  type ObserverStageOptions,
  type ObserverTopics,
  type ToolCallPositions,
} from './observer-stage-options';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The observer as an exactly-once stage (SPEC §5, §11). Tool calls run through a
 * SessionSignalDetector per session; their signals become per-session graph facts (written to
 * Neo4j, idempotently, BEFORE the transaction commits the offsets) and scratchpad entries.
 * Lifecycle events wait for the session's tool calls (another topic), then move the scratchpad
 * and end the session. Per-session state and scratchpads live in the compacted changelog, in the
 * transaction that commits the offsets; a partition's state is restored before its first batch.
 *
 * Between transactions the stage keeps the committed records as bytes, and every transaction
 * decodes what it touches: an aborted transaction is simply forgotten. If the graph write fails
 * (Neo4j down) the transaction aborts before anything is sent, the processor pauses the
 * partition and retries with backoff, and the redo starts from the same committed state. If the
 * abort came after a complete transform (the commit itself failed, its outcome unknown), the
 * touched partitions are restored from the changelog again, which holds the truth.
 *
 * The committed state is in ObserverCommittedState (observer-committed-state.ts), the
 * transaction's working copies of records in ObserverWorkingRecords (observer-working-records.ts),
 * what each event does in ObserverEventHandler (observer-event-handler.ts).
 */
export class ObserverStage {
  private readonly logger = new Logger(ObserverStage.name);
  private readonly state: ObserverCommittedState;
  private readonly records: ObserverWorkingRecords;
  private readonly handler: ObserverEventHandler;
  private staged: StagedWrite[] = [];
  private stagedConsumed = new Map<number, number>();
  private stagedProjectWorks = 0;
  private transformDone = false;
  private readonly sessionIdleMs: number;
  private readonly projectWork: ReturnType<typeof projectWorkCodec>;
  private readonly memories: TopicCodec<Typed<'Memory'>>;
  readonly counters: ObserverCounters = {
    toolCalls: 0,
    duplicates: 0,
    lifecycleEvents: 0,
    signals: 0,
    rejectedPaths: 0,
    graphBatches: 0,
    sessionsEnded: 0,
    sessionsExpired: 0,
    /** Ended sessions' records dropped after `endedSessionRetentionMs`. */
    endedSessionsForgotten: 0,
    promotionTriggers: 0,
    /** ProjectWork records committed for the project stage. */
    projectWorks: 0,
    /** FileManifests swept against the project's memories, and the memory paths found absent. */
    manifestsSwept: 0,
    manifestAbsentPaths: 0,
    workUnitOutcomes: 0,
  };

  constructor(
    private readonly topics: ObserverTopics,
    private readonly options: ObserverStageOptions,
  ) {
    this.sessionIdleMs = options.sessionIdleMs ?? DAY_MS;
    this.projectWork = projectWorkCodec(topics.projectWork);
    this.memories = codecOnTopic(contractCodec('memory.memories.v1'), topics.memories);
    this.state = new ObserverCommittedState(options.restore, options.positions, this.logger);
    this.records = new ObserverWorkingRecords(this.state, options);
    this.handler = new ObserverEventHandler(
      this.state,
      this.records,
      this.counters,
      options,
      this.logger,
    );
  }

  /** Sessions in committed state. */
  get openSessions(): number {
    return this.state.index.size;
  }

  /** Ended sessions whose events are still recognised if they come again. */
  get endedSessionsKept(): number {
    return this.state.endedIndex.size;
  }

  /** Lifecycle events still waiting for their sessions' tool calls. */
  get pendingLifecycle(): number {
    let pending = 0;
    for (const entry of this.state.index.values()) pending += entry.pending;
    return pending;
  }

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.state.onAssignment(partitions);
  }

  readonly toolCallStage: ExactlyOnceStage<Typed<'ToolCallObserved'>> = {
    transform: (items) => {
      this.state.noteConsumedTimes(this.state.consumedTimes.toolCalls, items);
      return this.run(items, (work) => {
        for (const item of items) {
          const next = Number(item.offset) + 1;
          if (next > (work.consumed.get(item.partition) ?? 0)) {
            work.consumed.set(item.partition, next);
          }
        }
        for (const item of items) this.handler.onToolCall(work, item);
        for (const partition of work.consumed.keys()) this.handler.drainPartition(work, partition);
      });
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly lifecycleStage: ExactlyOnceStage<LifecycleEvent> = {
    transform: async (items) => {
      this.state.noteConsumedTimes(this.state.consumedTimes.lifecycle, items);
      const ends = new Map<number, number>();
      for (const partition of new Set(items.map((item) => item.partition))) {
        ends.set(partition, await this.options.positions.endOffset(partition));
      }
      const behind = [...ends].filter(([p, end]) => this.state.consumedOf(null, p) < end);
      if (behind.length > 0) await this.state.refreshConsumed(behind.map(([p]) => p));
      const sweeps = await this.handler.manifestSweeps(items);
      return this.run(items, (work) => {
        for (const item of items) {
          this.handler.onLifecycle(work, item, ends.get(item.partition)!, sweeps.get(item) ?? null);
        }
        for (const partition of ends.keys()) this.handler.drainPartition(work, partition);
      });
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /**
   * The timer: applies lifecycle events whose tool calls have been consumed meanwhile (perhaps by
   * a predecessor), and finishes sessions idle for `sessionIdleMs` by their partition's watermark.
   */
  async sweep(): Promise<AnyStageOutput[]> {
    this.transformDone = false;
    for (const partition of this.state.owned) await this.state.ensureRestored(partition);
    const work = new Work();
    const waiting = [...this.state.index.values()].filter((entry) => entry.pending > 0);
    if (waiting.length > 0) {
      await this.state.refreshConsumed(waiting.map((entry) => entry.partition));
    }
    for (const partition of new Set(waiting.map((entry) => entry.partition))) {
      this.handler.drainPartition(work, partition);
    }
    for (const [sessionId, entry] of this.state.index) {
      if (this.state.watermark(entry.partition) - entry.lastActivityAt < this.sessionIdleMs) {
        continue;
      }
      const session = this.records.loadSession(work, sessionId, entry.partition);
      if (session && !session.ended) this.handler.expire(work, session);
    }
    for (const [sessionId, entry] of this.state.endedIndex) {
      const watermark = this.state.watermark(entry.partition);
      if (!endedSessionExpired(entry.lastActivityAt, watermark, this.options.settings)) {
        continue;
      }
      const ended = this.records.loadEnded(work, sessionId, entry.partition);
      if (ended && !ended.removed) {
        ended.removed = true;
        this.counters.endedSessionsForgotten += 1;
      }
    }
    return this.finish(work);
  }

  committed(): void {
    for (const write of this.staged) {
      this.state.committedRecords.apply(write.partition, write.key, write.value);
      if (write.key.startsWith('session:')) {
        const sessionId = write.key.slice('session:'.length);
        if (write.index === null) this.state.index.delete(sessionId);
        else this.state.index.set(sessionId, write.index as SessionIndexEntry);
      } else if (write.key.startsWith('ended:')) {
        const sessionId = write.key.slice('ended:'.length);
        if (write.index === null) this.state.endedIndex.delete(sessionId);
        else this.state.endedIndex.set(sessionId, write.index);
      }
    }
    this.counters.projectWorks += this.stagedProjectWorks;
    for (const [partition, offset] of this.stagedConsumed) {
      if (offset > (this.state.toolCallsConsumed.get(partition) ?? 0)) {
        this.state.toolCallsConsumed.set(partition, offset);
      }
    }
    this.resetTransaction();
  }

  /**
   * The transaction was rolled back. If the transform failed (a graph write refused), nothing
   * reached the log and the committed state in memory is still the truth; if it had completed,
   * the commit itself failed and may have happened: restore the partitions from the changelog.
   */
  aborted(): void {
    if (this.transformDone) {
      for (const partition of new Set(this.staged.map((write) => write.partition))) {
        this.state.forgetPartition(partition);
      }
    }
    this.resetTransaction();
  }

  private resetTransaction(): void {
    this.staged = [];
    this.stagedProjectWorks = 0;
    this.stagedConsumed = new Map();
    this.transformDone = false;
  }

  private async run<E>(
    items: Delivered<E>[],
    handle: (work: Work) => void,
  ): Promise<AnyStageOutput[]> {
    this.transformDone = false;
    for (const partition of new Set(items.map((item) => item.partition))) {
      await this.state.ensureRestored(partition);
    }
    const work = new Work();
    handle(work);
    return this.finish(work);
  }

  /**
   * The transaction's outputs: graph facts written first (the sink must accept them before the
   * offsets commit), then the changed records (or tombstones) for the changelog.
   */
  private async finish(work: Work): Promise<AnyStageOutput[]> {
    const graph = emptyGraphBatch();
    const staged: StagedWrite[] = [];
    for (const session of work.sessions.values()) {
      if (!session.changed) continue;
      const { record } = session;
      record.detector = session.detector.snapshot();
      this.addGraphRows(graph, session);
      const gone = session.ended && record.pending.length === 0;
      if (gone) {
        const pad = work.pads.get(record.scratchpadId) ?? this.records.padOf(work, session);
        pad.removed = true;
        this.records.keepEnded(work, session);
      }
      staged.push({
        partition: record.partition,
        key: sessionKey(record.sessionId),
        value: gone ? null : encodeRecord(record),
        index: gone
          ? null
          : {
              partition: record.partition,
              lastActivityAt: record.lastActivityAt,
              pending: record.pending.length,
            },
      });
    }
    for (const ended of work.ended.values()) {
      if (!ended || (!ended.changed && !ended.removed)) continue;
      const { record } = ended;
      staged.push({
        partition: record.partition,
        key: endedSessionKey(record.sessionId),
        value: ended.removed ? null : encodeRecord(record),
        index: ended.removed
          ? null
          : { partition: record.partition, lastActivityAt: record.lastActivityAt },
      });
    }
    for (const [scratchpadId, pad] of work.pads) {
      if (!pad.changed && !pad.removed) continue;
      staged.push({
        partition: pad.partition,
        key: scratchpadKey(scratchpadId),
        value: pad.removed
          ? null
          : encodeRecord({ v: 1, kind: 'scratchpad', partition: pad.partition, pad: pad.pad }),
        index: null,
      });
    }
    if (!isEmptyGraphBatch(graph)) {
      await this.options.writer.write(graph);
      this.counters.graphBatches += 1;
    }
    this.staged = staged;
    this.stagedConsumed = work.consumed;
    this.transformDone = true;
    const changelog: RawStageOutput = {
      topic: this.topics.changelog,
      messages: staged.map(({ key, partition, value }) => ({ key, partition, value })),
    };
    const projectWork: StageOutput<ProjectWork> = {
      codec: this.projectWork,
      events: [...work.projects.values()].filter((w) => !isEmptyProjectWork(w)),
    };
    this.stagedProjectWorks = projectWork.events.length;
    // Work units' outcomes (seed 002 §4): written by this stage, in the transaction of the
    // verdicts they record; the project stage's memories have other ids.
    const outcomes: StageOutput<Typed<'Memory'>> = {
      codec: this.memories,
      events: [...work.memories.values()].map((memory) => ({ type: 'Memory', ...memory })),
    };
    return [changelog, projectWork, outcomes];
  }

  private addGraphRows(graph: ObserverGraphBatch, session: WorkingSession): void {
    const { record } = session;
    graph.sessions.push({
      tenantId: record.tenantId,
      projectId: record.projectId,
      sessionId: record.sessionId,
      agentId: record.agentId,
      startedAt: minOf(record.startedAt, record.detector.startedAt),
      lastActivityAt: record.lastActivityAt,
      endedAt: record.endedAt,
      toolCalls: record.detector.callCount,
    });
    addFactRows(graph, record, record.facts, record.detector, session.changes);
  }
}

function minOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
