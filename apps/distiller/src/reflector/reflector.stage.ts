import type { Memory, Typed } from '@engram/contracts';
import {
  addDistillation,
  applyReviewCommand,
  emptyReflectorState,
  expireProjectProposals,
  KeyedChangelogState,
  projectReflectionDecision,
  pruneReflectorState,
  recordReflection,
  reflectionInputOf,
  toProposalRecord,
  transitionLogLine,
  type ReflectorProjectState,
  type ReflectorRetention,
  type ReviewProposal,
} from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  StageOutput,
  TopicCodec,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import type { ProjectReflector } from './project-reflector';
import { reflectorProjectKey, type ReflectorWork } from './reflector-work';

export interface ReflectorStageOptions {
  /** Compacted, partitioned like the work topic: one record per project. */
  changelogTopic: string;
  proposals: TopicCodec<Typed<'Proposal'>>;
  memories: TopicCodec<Typed<'Memory'>>;
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
  reflector: ProjectReflector;
  /** The daily reflection's UTC hour (default 6, seed 001's morning cron). */
  scheduledHourUtc?: number;
  /**
   * The daily reflection waits until no distillation arrived for this long (processing time,
   * default one minute), so a replay or a burst is reflected whole.
   */
  quietMs?: number;
  retention?: ReflectorRetention;
  /** The reflector's clock: the daily schedule, the 7-day expiry (default Date.now). */
  clock?: () => number;
}

/** One project's changelog record. */
interface ProjectRecord {
  partition: number;
  state: ReflectorProjectState;
}

/** What one transaction publishes besides the state (staged in the changelog state); forgotten if it aborts. */
class Work {
  readonly proposals: ReviewProposal[] = [];
  readonly memories: Memory[] = [];
  readonly log: string[] = [];
}

/**
 * The reflector (SPEC §8, seed 001 phases 2 and 3), partitioned by project: it keeps each
 * project's recent distillations and its proposals in a compacted changelog, and
 * - reflects once a day per project — on the daily schedule, or as soon as the newest day's unread
 *   distillations pass 40k tokens — into proposals `p-YYYYMMDD-NNN` on memory.proposals.v1;
 * - applies reviewers' decisions: an approval promotes a user-verified global memory to
 *   memory.memories.v1;
 * - expires proposals unreviewed for seven days.
 * Each state change of a proposal is republished under its id (the topic is compacted: it always
 * holds every proposal's latest state) and logged, in the transaction that commits the input
 * offsets and the changelog — so nothing is lost or done twice across restarts. An aborted
 * transaction forgets the state in memory; the next batch restores it from the changelog.
 */
export class ReflectorStage {
  private readonly logger = new Logger('Reflector');
  private readonly state: KeyedChangelogState<ProjectRecord>;
  private work = new Work();

  readonly counters = {
    distillations: 0,
    duplicates: 0,
    reflections: 0,
    proposals: 0,
    decisions: 0,
    refusedCommands: 0,
    expired: 0,
    promoted: 0,
  };

  constructor(private readonly options: ReflectorStageOptions) {
    this.state = new KeyedChangelogState({
      changelogTopic: options.changelogTopic,
      restore: options.restore,
      accepts: (record) => record.state.v === 1,
      onUnreadable: (key, error) =>
        this.logger.error(`unreadable changelog record ${key} skipped: ${String(error)}`),
    });
  }

  readonly workStage: ExactlyOnceStage<ReflectorWork> = {
    transform: (items) => this.run(items),
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.state.onAssignment(partitions);
  }

  /** The projects in committed state (tests, metrics). */
  projects(): ReflectorProjectState[] {
    return this.state.records().map((record) => record.state);
  }

  /** The timer: every owned project's expiries and due reflections, in one transaction. */
  async sweep(): Promise<AnyStageOutput[]> {
    this.begin();
    await this.state.restoreOwned();
    for (const { key, partition } of this.state.ownedRecords()) await this.settle(key, partition);
    return this.outputs();
  }

  committed(): void {
    this.state.commit();
    this.counters.proposals += this.work.proposals.filter((p) => p.status === 'pending').length;
    this.counters.promoted += this.work.memories.length;
    for (const line of this.work.log) this.logger.log(line);
    this.work = new Work();
  }

  aborted(): void {
    this.state.abort();
    this.work = new Work();
  }

  private begin(): void {
    this.state.begin();
    this.work = new Work();
  }

  private async run(items: Delivered<ReflectorWork>[]): Promise<AnyStageOutput[]> {
    this.begin();
    await this.state.restore(new Set(items.map((item) => item.partition)));
    for (const item of items) this.apply(item);
    for (const [key, record] of [...this.state.touched]) await this.settle(key, record.partition);
    return this.outputs();
  }

  private apply(item: Delivered<ReflectorWork>): void {
    const work = item.event;
    const key = reflectorProjectKey(work);
    const current = this.current(key, item.partition);
    if (work.kind === 'distillation') {
      const next = addDistillation(current, work.distillation, this.now());
      if (next === null) this.counters.duplicates += 1;
      else {
        this.counters.distillations += 1;
        this.touch(key, item.partition, next);
      }
      return;
    }
    const outcome = applyReviewCommand(current, work.command);
    if (!outcome.ok) {
      // A stale or conflicting decision (the proposal was decided meanwhile): nothing changes.
      this.counters.refusedCommands += 1;
      this.logger.warn(`review ${work.command.action} refused: ${outcome.message}`);
      return;
    }
    this.counters.decisions += 1;
    this.touch(key, item.partition, outcome.state);
    if (outcome.outcome.changed) this.changed(outcome.outcome.proposal);
    if (outcome.outcome.promoted) this.work.memories.push(outcome.outcome.promoted);
  }

  /** Expiry, a due reflection and pruning for one project, at the reflector's clock. */
  private async settle(key: string, partition: number): Promise<void> {
    const now = this.now();
    let state = this.current(key, partition);
    const { state: afterExpiry, expired } = expireProjectProposals(state, now);
    if (expired.length > 0) {
      state = afterExpiry;
      this.counters.expired += expired.length;
      for (const proposal of expired) this.changed(proposal);
      this.touch(key, partition, state);
    }
    const decision = projectReflectionDecision(state, now, {
      ...(this.options.scheduledHourUtc !== undefined && {
        scheduledHourUtc: this.options.scheduledHourUtc,
      }),
      quietMs: this.options.quietMs ?? 60_000,
    });
    if (decision.due) {
      const reflection = await this.options.reflector.reflect(reflectionInputOf(state, now));
      state = recordReflection(state, reflection, now);
      this.counters.reflections += 1;
      this.work.log.push(
        `${state.tenantId}:${state.projectId} reflected (${decision.reason}, ${reflection.method}): ` +
          `${reflection.proposals.length} proposals, ${reflection.inputTokens} → ${reflection.outputTokens} tokens`,
      );
      for (const proposal of reflection.proposals) this.changed(proposal);
      this.touch(key, partition, state);
    }
    const pruned = pruneReflectorState(state, now, this.options.retention);
    if (pruned !== null) this.touch(key, partition, pruned);
  }

  /** A proposal whose state changed: republished under its id, its last transition logged. */
  private changed(proposal: ReviewProposal): void {
    this.work.proposals.push(proposal);
    const transition = proposal.history[proposal.history.length - 1];
    if (transition) this.work.log.push(transitionLogLine(proposal.proposalId, transition));
  }

  private touch(key: string, partition: number, state: ReflectorProjectState): void {
    this.state.stage(key, { partition, state });
  }

  private current(key: string, partition: number): ReflectorProjectState {
    const record = this.state.current(partition, key);
    if (record) return record.state;
    const [tenantId, projectId] = JSON.parse(key) as [string, string];
    return emptyReflectorState(tenantId, projectId);
  }

  private outputs(): AnyStageOutput[] {
    return [
      {
        codec: this.options.proposals,
        events: this.work.proposals.map((p) => ({
          type: 'Proposal' as const,
          ...toProposalRecord(p),
        })),
      } satisfies StageOutput,
      {
        codec: this.options.memories,
        events: this.work.memories.map((m) => ({ type: 'Memory' as const, ...m })),
      } satisfies StageOutput,
      this.state.changelog(),
    ];
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }
}
