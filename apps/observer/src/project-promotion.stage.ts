import type { Embedder } from '@engram/ai';
import type { Memory, Typed } from '@engram/contracts';
import { createHash } from 'node:crypto';
import {
  addRecentSignal,
  addRecentSummary,
  emptyRecentEvidence,
  foldRecentUpTo,
  memoryAboutPaths,
  pathsChangedBy,
  promoteConverged,
  promotionOrderKey,
  retainRequest,
  reviseMemoriesForCommit,
  type CommitFileChanges,
  type MemoriesById,
  type MemoriesByFile,
  type CandidateEmbedding,
  type DraftCandidate,
  type ObserverSettings,
  type Rejection,
  type RequestOutcome,
  type Synthesiser,
  decodeStateJson,
  encodeStateJson,
  CommittedChangelog,
  withPropagatedConfidence,
} from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  RawStageOutput,
  StageOutput,
  TopicCodec,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { projectKeyOf, type ProjectWork } from './project-work';
import {
  boundRecent,
  existingVectors,
  forgetUnemittedConfidences,
  mergeEpisodes,
  newRecord,
  noteEmitted,
  toBase64,
  type ProjectRecord,
} from './project-record';

export type { ProjectRecord } from './project-record';

export interface ProjectPromotionOptions {
  settings: ObserverSettings;
  /** Compacted: one record per project (key = projectKeyOf). */
  stateTopic: string;
  memories: TopicCodec<Typed<'Memory'>>;
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
  /** Embeds the drafts for the novelty check (the core never calls a model). Absent: no check. */
  embedder?: Pick<Embedder, 'id' | 'embed'>;
  synthesiser?: Synthesiser;
  /**
   * The project's memories about a path (the compacted memory topic), for commits' renames and
   * deletions (issue #20), and by id, for the confidence propagation of re-promotions. Absent:
   * commits leave the memories alone; without `memoriesWithIds`, nothing propagates.
   */
  memoriesByFile?: MemoriesByFile & Partial<MemoriesById>;
}

/** Enough for a project's recent memories; older ones are still deduplicated by their ids. */
const MAX_NOVELTY_VECTORS = 500;
const MAX_SCRATCHPADS = 1_000;
/**
 * Promotions evaluated again when the project's statistics change: late signals of another
 * session change the promotions of the latest this many requests (older ones keep what they
 * gave). Each evaluation runs the rules once per retained request.
 */
export const MAX_RETAINED_REQUESTS = 64;
const MAX_FROZEN_IDS = 5_000;
const MAX_CACHED_EMBEDDINGS = 10_000;

/**
 * The observer's second stage, partitioned by project: folds every signal into the project's
 * statistics, records ended sessions, and runs the promotion pipeline of SPEC §5 (rules →
 * frequency → novelty → score → cap → templates) for each due trigger. The memories go to
 * memory.memories.v1 in the transaction that commits the statistics and the input offsets, so a
 * promotion happens exactly once; memory ids are deterministic, so even a replay from scratch
 * only upserts the same memories again.
 */
export class ProjectPromotionStage implements ExactlyOnceStage<ProjectWork> {
  private readonly logger = new Logger(ProjectPromotionStage.name);
  private readonly committedRecords: CommittedChangelog<ProjectRecord>;
  private staged: { partition: number; key: string; value: Buffer }[] = [];
  private transformDone = false;
  /** Draft text → vector, for the drafts evaluated again (bounded). */
  private readonly embeddings = new Map<string, ArrayLike<number>>();

  /** `works`/`memories` count transforms (a redo counts again); `committed*` count commits. */
  readonly counters = {
    works: 0,
    promotions: 0,
    memories: 0,
    rejected: 0,
    /** Next versions written for commits' renames and deletions. */
    revisedForFiles: 0,
    /** Next versions of related memories a re-promotion's confidence change moved. */
    propagated: 0,
    committedWorks: 0,
    committedMemories: 0,
  };
  private stagedCounts = { works: 0, memories: 0 };
  /** The latest rejections (why a candidate did not become a memory), for logs and tests. */
  readonly recentRejections: Rejection[] = [];

  constructor(private readonly options: ProjectPromotionOptions) {
    this.committedRecords = new CommittedChangelog({
      restore: options.restore,
      decode: (value) => decodeStateJson<ProjectRecord>(value),
      onUnreadable: (key, error) =>
        this.logger.error(`unreadable project state ${key} skipped: ${String(error)}`),
    });
  }

  onAssignment(partitions: readonly number[]): void {
    const owned = new Set(partitions);
    for (const partition of this.committedRecords.partitions) {
      if (!owned.has(partition)) this.committedRecords.forget(partition);
    }
  }

  async transform(items: Delivered<ProjectWork>[]): Promise<AnyStageOutput[]> {
    this.transformDone = false;
    const working = new Map<string, ProjectRecord>();
    let memories: Memory[] = [];
    const repromoted = new Set<string>();
    const withdrawn: string[] = [];
    const changed = new Set<ProjectRecord>();
    const fileChanges: CommitFileChanges[] = [];
    for (const item of items) {
      const record = await this.recordOf(working, item);
      if (this.apply(record, item.event)) changed.add(record);
      fileChanges.push(...(item.event.fileChanges ?? []));
    }
    // The promotions once every item is folded in: what the batch boundaries were does not matter.
    for (const record of changed) {
      const evaluated = await this.evaluate(record);
      memories.push(...evaluated.memories);
      withdrawn.push(...evaluated.withdrawn);
      for (const memoryId of evaluated.repromoted) repromoted.add(memoryId);
    }
    memories = await this.withPropagation(memories, repromoted);
    for (const changes of fileChanges) {
      memories.push(...(await this.reviseForCommit(changes, memories)));
    }
    this.staged = [...working].map(([key, record]) => ({
      partition: record.partition,
      key,
      value: encodeStateJson(record),
    }));
    this.stagedCounts = { works: items.length, memories: memories.length };
    this.transformDone = true;
    const memoryOutput: StageOutput<Typed<'Memory'>> = {
      codec: this.options.memories,
      events: memories.map((memory) => ({ type: 'Memory', ...memory })),
    };
    const state: RawStageOutput = { topic: this.options.stateTopic, messages: this.staged };
    if (withdrawn.length === 0) return [memoryOutput, state];
    const tombstones: RawStageOutput = {
      topic: this.options.memories.topic,
      messages: withdrawn.map((memoryId) => ({ key: memoryId, value: null })),
    };
    return [memoryOutput, state, tombstones];
  }

  onCommitted(): void {
    for (const { partition, key, value } of this.staged) {
      this.committedRecords.apply(partition, key, value);
    }
    this.counters.committedWorks += this.stagedCounts.works;
    this.counters.committedMemories += this.stagedCounts.memories;
    this.staged = [];
    this.transformDone = false;
  }

  /** A failed commit may have happened: the changelog, not memory, is then the truth. */
  onAborted(): void {
    if (this.transformDone) {
      for (const { partition } of this.staged) this.committedRecords.forget(partition);
    }
    this.staged = [];
    this.transformDone = false;
  }

  /** Folds the work into the record; true when the promotions are to be evaluated again. */
  private apply(record: ProjectRecord, work: ProjectWork): boolean {
    this.counters.works += 1;
    const { settings } = this.options;
    const horizon = record.horizon ?? -Infinity;
    const recent = (record.recent ??= emptyRecentEvidence());
    for (const signal of work.signals) addRecentSignal(record.stats, recent, horizon, signal);
    for (const summary of work.summaries) {
      addRecentSummary(record.stats, recent, horizon, summary, settings.maxSessionSummaries);
    }
    if (work.episodes?.length) {
      record.episodes = mergeEpisodes(record.episodes ?? [], work.episodes);
    }
    boundRecent(record, settings.maxSessionSummaries);
    record.requests ??= [];
    for (const request of work.promotions) retainRequest(record.requests, request);
    this.counters.promotions += work.promotions.length;
    return (
      work.signals.length + work.summaries.length + work.promotions.length > 0 ||
      (work.episodes?.length ?? 0) > 0
    );
  }

  /**
   * The project's retained promotions evaluated again on its current statistics (the core's
   * `promoteConverged`): the memories whose version changed are written, the ones no request
   * gives any more are withdrawn (tombstones), and the requests beyond MAX_RETAINED_REQUESTS
   * leave, their memories frozen.
   */
  private async evaluate(
    record: ProjectRecord,
  ): Promise<{ memories: Memory[]; withdrawn: string[]; repromoted: string[] }> {
    const requests = record.requests ?? [];
    const emitted = (record.emitted ??= {});
    const result = await promoteConverged(requests, {
      tenantId: record.tenantId,
      projectId: record.projectId,
      stats: record.stats,
      ...(record.recent && { recent: record.recent }),
      episodes: record.episodes ?? [],
      settings: this.options.settings,
      frozenPromoted: record.promotedByScratchpad,
      frozenVectors: existingVectors(record),
      ...(this.options.embedder && { embed: (drafts) => this.embed(drafts) }),
      ...(this.options.synthesiser && { synthesiser: this.options.synthesiser }),
    });
    const memories: Memory[] = [];
    const repromoted: string[] = [];
    for (const memory of result.memories.values()) {
      const { emit, propagates } = noteEmitted(record, memory, digestOf(memory));
      if (!emit) continue;
      if (propagates) repromoted.push(memory.memoryId);
      memories.push(memory);
    }
    const frozen = new Set(record.frozen ?? []);
    const withdrawn: string[] = [];
    for (const memoryId of Object.keys(emitted)) {
      if (result.memories.has(memoryId)) continue;
      delete emitted[memoryId];
      if (!frozen.has(memoryId)) withdrawn.push(memoryId);
    }
    this.freeze(record, result.outcomes, emitted, frozen);
    forgetUnemittedConfidences(record);
    this.noteRejections(result.rejected);
    this.counters.memories += memories.length;
    return { memories, withdrawn, repromoted };
  }

  /**
   * Issue #20: the re-promotions whose confidence changed move the memories their relations reach
   * (core `withPropagatedConfidence`), in this transaction. Only re-promotions read the memory
   * topic: a first promotion has no previous confidence.
   */
  private async withPropagation(memories: Memory[], repromoted: Set<string>): Promise<Memory[]> {
    const lookup = this.options.memoriesByFile;
    if (!lookup?.memoriesWithIds || repromoted.size === 0) return memories;
    const written = await withPropagatedConfidence(memories, repromoted, (scope, ids) =>
      lookup.memoriesWithIds!(scope, ids),
    );
    this.counters.propagated += written.length - memories.length;
    return written;
  }

  /** The oldest requests beyond MAX_RETAINED_REQUESTS leave; what they promoted stays. */
  private freeze(
    record: ProjectRecord,
    outcomes: readonly RequestOutcome[],
    emitted: Record<string, string>,
    frozen: Set<string>,
  ): void {
    const requests = record.requests ?? [];
    const leaving = requests.length - MAX_RETAINED_REQUESTS;
    if (leaving <= 0) return;
    const gone = new Set(requests.slice(0, leaving).map(promotionOrderKey));
    // What the frozen requests read is final: their evidence joins the base statistics.
    const horizon = Math.max(record.horizon ?? -Infinity, requests[leaving - 1].at);
    record.horizon = horizon;
    record.recent ??= emptyRecentEvidence();
    foldRecentUpTo(record.stats, record.recent, horizon, this.options.settings.maxSessionSummaries);
    record.requests = requests.slice(leaving);
    const staying = new Set<string>();
    for (const outcome of outcomes) {
      if (gone.has(outcome.orderKey)) continue;
      for (const memory of outcome.memories) staying.add(memory.memoryId);
    }
    for (const outcome of outcomes) {
      if (!gone.has(outcome.orderKey)) continue;
      record.promotedByScratchpad[outcome.scratchpadId] =
        (record.promotedByScratchpad[outcome.scratchpadId] ?? 0) + outcome.memories.length;
      for (const memory of outcome.memories) {
        frozen.add(memory.memoryId);
        if (!staying.has(memory.memoryId)) delete emitted[memory.memoryId];
      }
      for (const v of outcome.vectors) {
        record.vectors = record.vectors.filter((old) => old.memoryId !== v.memoryId);
        record.vectors.push({
          memoryId: v.memoryId,
          model: v.embeddingModel ?? '',
          vector: toBase64(v.embedding),
        });
      }
    }
    const scratchpads = Object.keys(record.promotedByScratchpad);
    for (const old of scratchpads.slice(0, Math.max(0, scratchpads.length - MAX_SCRATCHPADS))) {
      delete record.promotedByScratchpad[old];
    }
    record.vectors = record.vectors.slice(-MAX_NOVELTY_VECTORS);
    record.frozen = [...frozen].slice(-MAX_FROZEN_IDS);
  }

  /**
   * The next versions of the memories a commit renamed or deleted files of (the decision is the
   * core's `reviseMemoriesForCommit`). The candidates are the committed latest versions, with
   * this transaction's own memories in their place: those are newer.
   */
  private async reviseForCommit(
    changes: CommitFileChanges,
    written: readonly Memory[],
  ): Promise<Memory[]> {
    const lookup = this.options.memoriesByFile;
    if (!lookup) return [];
    const paths = pathsChangedBy(changes);
    const latest = new Map<string, Memory>();
    for (const memory of await lookup.memoriesAbout(changes, paths)) {
      latest.set(memory.memoryId, memory);
    }
    for (const memory of written) {
      if (memoryAboutPaths(memory, changes, paths)) latest.set(memory.memoryId, memory);
      else latest.delete(memory.memoryId);
    }
    const revised = reviseMemoriesForCommit([...latest.values()], changes).map(
      ({ type: _type, ...memory }: Memory & { type?: string }) => memory,
    );
    this.counters.revisedForFiles += revised.length;
    return revised;
  }

  /** Drafts' vectors; a draft's text embeds to the same vector every time, so it is cached. */
  private async embed(drafts: DraftCandidate[]): Promise<Map<string, CandidateEmbedding>> {
    const { embedder } = this.options;
    if (!embedder || drafts.length === 0) return new Map();
    const missing = [
      ...new Set(drafts.map((d) => d.draft.content).filter((c) => !this.embeddings.has(c))),
    ];
    if (missing.length > 0) {
      const vectors = await embedder.embed(missing);
      missing.forEach((content, i) => this.embeddings.set(content, vectors[i]));
      const excess = this.embeddings.size - MAX_CACHED_EMBEDDINGS;
      for (const old of [...this.embeddings.keys()].slice(0, Math.max(0, excess))) {
        this.embeddings.delete(old);
      }
    }
    return new Map(
      drafts.map((d) => [
        d.key,
        { vector: this.embeddings.get(d.draft.content)!, model: embedder.id },
      ]),
    );
  }

  private noteRejections(rejections: Rejection[]): void {
    this.counters.rejected += rejections.length;
    this.recentRejections.push(...rejections);
    this.recentRejections.splice(0, Math.max(0, this.recentRejections.length - 200));
  }

  private async recordOf(
    working: Map<string, ProjectRecord>,
    item: Delivered<ProjectWork>,
  ): Promise<ProjectRecord> {
    const key = projectKeyOf(item.event);
    const current = working.get(key);
    if (current) return current;
    await this.committedRecords.ensure(item.partition, () => undefined);
    const bytes = this.committedRecords.get(item.partition, key);
    const record = bytes ? decodeStateJson<ProjectRecord>(bytes) : newRecord(item);
    working.set(key, record);
    return record;
  }
}

/** A memory version's digest: an evaluation that gives the same version writes nothing. */
function digestOf(memory: Memory): string {
  return createHash('sha256').update(JSON.stringify(memory)).digest('base64');
}
