import type { Embedder, LlmClient } from '@engram/ai';
import {
  accessHitOf,
  DEFAULT_RANKING_CONFIG,
  episodeFilters,
  errorMessage,
  hydeEnsemble,
  hydePrompt,
  isSessionNote,
  memoryFilters,
  modelVector,
  parseRecallRequest,
  rankSessionNotes,
  resolveTemporalMode,
  shouldUseHyde,
  turnFilters,
  turnProvenance,
  type MemoryFilter,
  type ModelVector,
  type RankingConfig,
  type RecallQuery,
  type RecallRequestInput,
  type RecallTier,
  type SessionNote,
  type SessionNoteStore,
  type StoreFilter,
  type TemporalConstraint,
} from '@engram/core';
import type { EpisodeDocument, MemoryDocument, TurnDocument } from '@engram/core';
import { Logger } from '@nestjs/common';
import type { AccessTracker } from './access-tracker';
import { mergeRecallHits } from './recall-hit-merge';
import type { RecallStore } from './recall-store';
import {
  candidatesPerList,
  memoryHit,
  rankTier,
  withKnn,
  type CandidateLists,
  type RecallHit,
  type TierCandidates,
  type TierRanking,
} from './recall-tier-ranking';
import { SessionNoteLookup } from './session-note-lookup';

export { candidatesPerList, episodeText, type RecallHit } from './recall-tier-ranking';

export interface RecallTimings {
  /** Embedding the query (the BM25 searches run meanwhile). */
  embedMs: number;
  /** Writing and embedding the hypothetical memory (0 when HyDE did not run). */
  hydeMs: number;
  /**
   * Waiting for the candidates of every tier once the query was embedded: the kNN searches, and
   * whatever of the BM25 ones the embedding did not cover.
   */
  searchMs: number;
  /** Fusion, scoring and merging (the pure core). */
  rankMs: number;
  /** Including the episode lookup of returned turns (provenance). */
  totalMs: number;
}

export interface RecallAnswer {
  query: RecallQuery;
  results: RecallHit[];
  /** The model the query was embedded with; only vectors of this model were compared. */
  embeddingModel: string;
  /** The hypothetical memory searched with (HyDE), when the query alone found too little. */
  hyde: { hypothetical: string } | null;
  timings: RecallTimings;
}

export interface RecallServiceOptions {
  config?: RankingConfig;
  clock?: () => number;
  /** Receives every memory a recall returned (accessCount + 1); null: not tracked. */
  access?: AccessTracker | null;
  /** See DEFAULT_MIN_KNN_SIMILARITY; a model with another similarity scale needs its own. */
  minKnnSimilarity?: number;
  /**
   * HyDE (seed 002 §7): with an LLM, a query whose results are weak is searched again with the
   * blend of its embedding and a hypothetical answer's. Null or absent: never.
   */
  hyde?: LlmClient | null;
  /**
   * The scratchpad tier (seed 002 §8): the agents' notes of their own sessions, recalled in that
   * session before their work validates. Null or absent: recall reads the store alone.
   */
  notes?: SessionNoteStore | null;
}

/**
 * The cosine below which a kNN neighbour is not a candidate. kNN always returns k neighbours,
 * related or not; without a floor, a document with nothing in common with the query (all-MiniLM
 * cosine ≈ 0–0.15 for unrelated English sentences) enters the fusion with an RRF rank, earns the
 * recency and frequency priors, and a favourable phase weight can lift it above an exact match.
 * 0.2 keeps paraphrases (≈ 0.3 and up with this model) and drops noise. BM25 hits are kept
 * whatever their cosine: a lexical match is evidence on its own.
 */
export const DEFAULT_MIN_KNN_SIMILARITY = 0.2;

/** The hypothetical memory's length (seed 002 §7: maxTokens 150). */
const HYDE_MAX_TOKENS = 150;

/**
 * The Recall half of retrieval (SPEC §7): validate, fetch BM25 candidates of each tier while the
 * query is embedded, then kNN candidates, rank each tier with the pure core (RRF, exact cosine,
 * base hybrid score, phase weight, stale penalty), merge the tiers, and hand the returned memories
 * to access tracking without waiting for it. The same class serves gRPC and `engram recall`.
 */
export class RecallService {
  private readonly config: RankingConfig;
  private readonly clock: () => number;
  private readonly access: AccessTracker | null;
  private readonly minKnnSimilarity: number;
  private readonly hyde: LlmClient | null;
  private readonly notes: SessionNoteLookup;
  private readonly logger = new Logger(RecallService.name);

  constructor(
    private readonly store: RecallStore,
    private readonly embedder: Embedder,
    options: RecallServiceOptions = {},
  ) {
    this.config = options.config ?? DEFAULT_RANKING_CONFIG;
    this.clock = options.clock ?? Date.now;
    this.access = options.access ?? null;
    this.minKnnSimilarity = options.minKnnSimilarity ?? DEFAULT_MIN_KNN_SIMILARITY;
    this.hyde = options.hyde ?? null;
    this.notes = new SessionNoteLookup(options.notes ?? null, this.clock);
  }

  get embeddingModel(): string {
    return this.embedder.id;
  }

  /** Throws InvalidRecallRequestError (naming the field) for a request that cannot be answered. */
  async recall(input: RecallRequestInput): Promise<RecallAnswer> {
    const query = parseRecallRequest(input);
    const started = performance.now();
    // Only a request naming a session with notes has any: a Map lookup otherwise.
    const notes = this.notes.of(query);
    const temporal = await this.resolveTemporal(query);
    // BM25 needs no vector: its searches run in the store while the query is embedded here.
    const lexical = this.searchTiers(query, temporal, { text: query.query, vector: null });
    lexical.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    const embedding = performance.now();
    const vector = await this.embedQuery(query.query);
    const embedded = performance.now();
    const first = await this.rankWith(query, temporal, lexical, vector, notes);
    // A lexical-only recall (no embedding model) has nothing to blend the hypothesis into.
    const weak = shouldUseHyde(
      first.hits.map((hit) => hit.score.relevance),
      { llmConfigured: this.hyde !== null, allowed: vector.dimension > 0 },
      this.config,
    );
    const hydeStarted = performance.now();
    const hypothetical = weak ? await this.hypothetical(query.query) : null;
    const second = hypothetical
      ? await this.rankWith(
          query,
          temporal,
          lexical,
          hydeEnsemble(vector, await this.embedQuery(hypothetical), this.config),
          notes,
        )
      : null;
    const hydeMs = hypothetical ? performance.now() - hydeStarted - (second?.searchMs ?? 0) : 0;
    const merged = (second ?? first).hits;
    const results = await this.withTurnEpisodes(query, merged);
    if (query.track) {
      this.access?.record(
        results.flatMap((hit) =>
          // A session note is no stored memory yet: nothing to count.
          hit.tier === 'memories' && !isSessionNote(hit.memory.memory)
            ? [accessHitOf(query.scope, hit.memory.memory)]
            : [],
        ),
      );
    }
    return {
      query,
      results,
      embeddingModel: this.embedder.id,
      hyde: hypothetical ? { hypothetical } : null,
      timings: {
        embedMs: embedded - embedding,
        hydeMs,
        searchMs: first.searchMs + (second?.searchMs ?? 0),
        rankMs: first.rankMs + (second?.rankMs ?? 0),
        totalMs: performance.now() - started,
      },
    };
  }

  /**
   * Every tier's BM25 candidates (already asked for) and kNN candidates of this vector, ranked
   * and merged into one list of k; the session's notes, when it has any, as one more list.
   */
  private async rankWith(
    query: RecallQuery,
    temporal: TemporalConstraint | undefined,
    lexical: Promise<TierCandidates[]>,
    vector: ModelVector,
    notes: readonly SessionNote[],
  ): Promise<{ hits: RecallHit[]; searchMs: number; rankMs: number }> {
    const started = performance.now();
    // A lexical-only recall (no embedding model) has no kNN list.
    const [bm25, knn] = await Promise.all([
      lexical,
      vector.dimension > 0 ? this.searchTiers(query, temporal, { text: null, vector }) : null,
    ]);
    const searched = performance.now();
    const ranking: TierRanking = {
      query,
      vector,
      memoryFilter: this.memoryFilter(query, temporal),
      temporal,
      now: this.clock(),
    };
    const tiers = bm25.map((found, i) => withKnn(found, knn?.[i]));
    const lists = tiers.map((found) => rankTier(found, ranking, this.config));
    if (notes.length > 0) {
      const stored = tiers.find((found) => found.tier === 'memories')?.candidates.sources;
      const pending = this.notes.awaitingValidation(query, notes, new Set(stored?.keys()));
      lists.push(this.rankNotes(pending, ranking));
    }
    const hits = mergeRecallHits(query, lists, this.config);
    return { hits, searchMs: searched - started, rankMs: performance.now() - searched };
  }

  private rankNotes(notes: readonly SessionNote[], ranking: TierRanking): RecallHit[] {
    const { query, vector, memoryFilter, now } = ranking;
    return rankSessionNotes(
      {
        notes,
        query: query.query,
        vector,
        filter: memoryFilter,
        phase: query.phase,
        now,
        minSimilarity: this.minKnnSimilarity,
      },
      this.config,
    ).map(memoryHit);
  }

  /** One list (BM25 with a text, kNN with a vector) of every tier of the query, in its order. */
  private searchTiers(
    query: RecallQuery,
    temporal: TemporalConstraint | undefined,
    lists: CandidateLists,
  ): Promise<TierCandidates[]> {
    return Promise.all(query.tiers.map((tier) => this.searchTier(tier, query, lists, temporal)));
  }

  /**
   * The memory that would answer the query, from the LLM; null when it cannot give one (an
   * outage, a refusal, an empty answer): HyDE only ever improves a recall, it never fails one.
   */
  private async hypothetical(query: string): Promise<string | null> {
    try {
      const answer = await this.hyde!.complete({
        messages: [{ role: 'user', content: hydePrompt(query) }],
        maxTokens: HYDE_MAX_TOKENS,
      });
      const text = answer.text.trim();
      return text === '' ? null : text;
    } catch (error) {
      this.logger.warn(`HyDE skipped, the recall uses the query alone: ${errorMessage(error)}`);
      return null;
    }
  }

  /**
   * A prompt does not know its episode when it is indexed; the episodes do (their prompts'
   * eventIds), so the returned turns' provenance is completed from them: one lookup per recall,
   * only when turns are returned.
   */
  private async withTurnEpisodes(query: RecallQuery, hits: RecallHit[]): Promise<RecallHit[]> {
    const turnIds = hits.flatMap((hit) => (hit.tier === 'turns' ? [hit.id] : []));
    if (turnIds.length === 0) return hits;
    const episodes = await this.store.episodesOfTurns(query.scope, turnIds);
    return hits.map((hit) => {
      if (hit.tier !== 'turns') return hit;
      const own = turnProvenance(hit.turn, episodes.get(hit.id) ?? []);
      const episodeIds = [...new Set([...hit.provenance.episodeIds, ...own.episodeIds])];
      return { ...hit, provenance: { ...hit.provenance, episodeIds } };
    });
  }

  private async embedQuery(text: string): Promise<ModelVector> {
    const [vector] = await this.embedder.embed([text]);
    return modelVector(this.embedder.id, Array.from(vector));
  }

  /** Time modes as constraints; recent_sessions asks the store which sessions are recent. */
  private async resolveTemporal(query: RecallQuery): Promise<TemporalConstraint | undefined> {
    const mode = query.temporal;
    if (mode === null) return undefined;
    const sessions =
      mode.mode === 'recent_sessions'
        ? await this.store.recentSessions(query.scope, mode.n)
        : undefined;
    return resolveTemporalMode(mode, sessions);
  }

  private memoryFilter(query: RecallQuery, temporal: TemporalConstraint | undefined): MemoryFilter {
    return {
      ...query.scope,
      types: query.memoryTypes,
      relatedFiles: query.relatedFiles,
      stale: query.stale,
      temporal,
      ...(query.minConfidence !== null && { minConfidence: query.minConfidence }),
    };
  }

  private async searchTier(
    tier: RecallTier,
    query: RecallQuery,
    lists: CandidateLists,
    temporal: TemporalConstraint | undefined,
  ): Promise<TierCandidates> {
    const search = <S>(filter: StoreFilter[]) =>
      this.store.candidates<S>(tier, {
        ...lists,
        scope: query.scope,
        filter,
        size: candidatesPerList(query.k),
        minSimilarity: this.minKnnSimilarity,
      });
    switch (tier) {
      case 'memories':
        return {
          tier,
          candidates: await search<MemoryDocument>(
            memoryFilters(this.memoryFilter(query, temporal), temporal),
          ),
        };
      case 'episodes':
        return {
          tier,
          candidates: await search<EpisodeDocument>(episodeFilters(temporal)),
        };
      case 'turns':
        return {
          tier,
          candidates: await search<TurnDocument>(turnFilters(temporal)),
        };
    }
  }
}
