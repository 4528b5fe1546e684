import type { Embedder } from '@engram/ai';
import type { Memory, Typed } from '@engram/contracts';
import {
  draftCandidates,
  emptyProjectStats,
  foldSignal,
  promoteRanked,
  memoryAboutPaths,
  pathsChangedBy,
  rankCandidates,
  recordSessionSummary,
  reviseMemoriesForCommit,
  type CommitFileChanges,
  type MemoriesByFile,
  type CandidateEmbedding,
  type DraftCandidate,
  type EpisodeRange,
  type ExistingMemoryVector,
  type ObserverSettings,
  type ProjectObservationStats,
  type PromotionInput,
  type Rejection,
  type Synthesiser,
  decodeStateJson,
  encodeStateJson,
  CommittedChangelog,
} from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  RawStageOutput,
  StageOutput,
  TopicCodec,
} from '@engram/kafka';
import { Logger } from '@nestjs/common';
import { projectKeyOf, type ProjectWork, type PromotionRequest } from './project-work';

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
   * deletions (issue #20). Absent: commits leave the memories alone.
   */
  memoriesByFile?: MemoriesByFile;
}

/** A promoted memory's vector, kept for the novelty check of later promotions. */
interface StoredVector {
  memoryId: string;
  model: string;
  /** Float32 little-endian, base64: a quarter of the size of a JSON number list. */
  vector: string;
}

/** The changelog record of one project. */
export interface ProjectRecord {
  v: 1;
  partition: number;
  tenantId: string;
  projectId: string;
  stats: ProjectObservationStats;
  /** Memories promoted per scratchpad: its incremental passes share one cap. */
  promotedByScratchpad: Record<string, number>;
  /** The newest promoted memories' vectors, at most MAX_NOVELTY_VECTORS. */
  vectors: StoredVector[];
  /** The project's latest episodes (prompt ranges), at most MAX_EPISODES; absent in old records. */
  episodes?: EpisodeRange[];
}

/** Enough for a project's recent memories; older ones are still deduplicated by their ids. */
const MAX_NOVELTY_VECTORS = 500;
const MAX_SCRATCHPADS = 1_000;
/** Enough for the sessions whose promotions are still to come. */
const MAX_EPISODES = 500;

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

  /** `works`/`memories` count transforms (a redo counts again); `committed*` count commits. */
  readonly counters = {
    works: 0,
    promotions: 0,
    memories: 0,
    rejected: 0,
    /** Next versions written for commits' renames and deletions. */
    revisedForFiles: 0,
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
    const memories: Memory[] = [];
    for (const item of items) {
      const record = await this.recordOf(working, item);
      memories.push(...(await this.apply(record, item.event, memories)));
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
    return [memoryOutput, state];
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

  /** `written`: this transaction's memories so far (a commit's lookup must see them). */
  private async apply(
    record: ProjectRecord,
    work: ProjectWork,
    written: readonly Memory[],
  ): Promise<Memory[]> {
    this.counters.works += 1;
    const { settings } = this.options;
    for (const signal of work.signals) foldSignal(record.stats, signal);
    for (const summary of work.summaries) {
      recordSessionSummary(record.stats, summary, settings.maxSessionSummaries);
    }
    if (work.episodes?.length) {
      record.episodes = mergeEpisodes(record.episodes ?? [], work.episodes);
    }
    const memories: Memory[] = [];
    for (const request of work.promotions) memories.push(...(await this.promote(record, request)));
    for (const changes of work.fileChanges ?? []) {
      memories.push(...(await this.reviseForCommit(changes, [...written, ...memories])));
    }
    return memories;
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

  private async promote(record: ProjectRecord, request: PromotionRequest): Promise<Memory[]> {
    const { settings } = this.options;
    const input: PromotionInput = {
      tenantId: record.tenantId,
      projectId: record.projectId,
      signals: request.signals,
      notes: request.notes,
      qaIssues: request.qaIssues,
      commits: request.commits,
      stats: record.stats,
      validated: request.trigger.validated,
      now: request.at,
      settings,
    };
    const drafted = draftCandidates(input);
    const ranked = rankCandidates(
      drafted.drafts,
      {
        embeddings: await this.embed(drafted.drafts),
        existingMemories: existingVectors(record),
        complexity: request.complexity,
        alreadyPromoted: record.promotedByScratchpad[request.scratchpadId] ?? 0,
      },
      request.at,
      settings,
    );
    const consolidation = request.consolidation ?? [];
    const { memories } = await promoteRanked([...ranked.selected, ...consolidation], input, {
      workUnitRef: request.workUnitRef,
      fallbackSessionId: request.sessionId,
      episodes: record.episodes ?? [],
      ...(this.options.synthesiser && { synthesiser: this.options.synthesiser }),
    });
    this.remember(record, request.scratchpadId, ranked.selected, memories.length);
    this.noteRejections([...drafted.rejected, ...ranked.rejected]);
    this.counters.promotions += 1;
    this.counters.memories += memories.length;
    return memories;
  }

  private async embed(drafts: DraftCandidate[]): Promise<Map<string, CandidateEmbedding>> {
    const { embedder } = this.options;
    if (!embedder || drafts.length === 0) return new Map();
    const vectors = await embedder.embed(drafts.map((d) => d.draft.content));
    return new Map(drafts.map((d, i) => [d.key, { vector: vectors[i], model: embedder.id }]));
  }

  private remember(
    record: ProjectRecord,
    scratchpadId: string,
    selected: readonly { memoryId: string; embedding?: CandidateEmbedding }[],
    promoted: number,
  ): void {
    record.promotedByScratchpad[scratchpadId] =
      (record.promotedByScratchpad[scratchpadId] ?? 0) + promoted;
    const scratchpads = Object.keys(record.promotedByScratchpad);
    for (const old of scratchpads.slice(0, Math.max(0, scratchpads.length - MAX_SCRATCHPADS))) {
      delete record.promotedByScratchpad[old];
    }
    for (const { memoryId, embedding } of selected) {
      if (!embedding || embedding.model === null) continue;
      record.vectors = record.vectors.filter((v) => v.memoryId !== memoryId);
      record.vectors.push({ memoryId, model: embedding.model, vector: toBase64(embedding.vector) });
    }
    record.vectors = record.vectors.slice(-MAX_NOVELTY_VECTORS);
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

function newRecord(item: Delivered<ProjectWork>): ProjectRecord {
  return {
    v: 1,
    partition: item.partition,
    tenantId: item.event.tenantId,
    projectId: item.event.projectId,
    stats: emptyProjectStats(),
    promotedByScratchpad: {},
    vectors: [],
  };
}

/** Episodes by id, the latest version of each, the newest MAX_EPISODES kept. */
function mergeEpisodes(known: EpisodeRange[], incoming: EpisodeRange[]): EpisodeRange[] {
  const byId = new Map(known.map((episode) => [episode.episodeId, episode]));
  for (const episode of incoming) {
    byId.delete(episode.episodeId);
    byId.set(episode.episodeId, episode);
  }
  return [...byId.values()].slice(-MAX_EPISODES);
}

function existingVectors(record: ProjectRecord): ExistingMemoryVector[] {
  return record.vectors.map((v) => ({
    memoryId: v.memoryId,
    embeddingModel: v.model,
    embedding: fromBase64(v.vector),
  }));
}

function toBase64(vector: ArrayLike<number>): string {
  return Buffer.from(Float32Array.from(vector).buffer).toString('base64');
}

function fromBase64(text: string): Float32Array {
  // A copy: a decoded Buffer may sit at an offset of a shared pool that is not 4-byte aligned.
  return new Float32Array(Uint8Array.from(Buffer.from(text, 'base64')).buffer);
}
