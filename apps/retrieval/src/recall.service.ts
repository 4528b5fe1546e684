import type { Embedder, LlmClient } from '@engram/ai';
import type { Episode, PromptSubmitted } from '@engram/contracts';
import {
  accessHitOf,
  DEFAULT_RANKING_CONFIG,
  episodeFilters,
  errorMessage,
  explainScore,
  hydeEnsemble,
  hydePrompt,
  memoryFilters,
  mergeAcrossTiers,
  modelVector,
  parseRecallRequest,
  rankEpisodes,
  rankMemories,
  rankTurns,
  resolveTemporalMode,
  shouldUseHyde,
  supersededAfterSuccessors,
  turnFilters,
  turnProvenance,
  type CrossTierRelevance,
  type MemoryFilter,
  type ModelVector,
  type Provenance,
  type RankedMemory,
  type RankingConfig,
  type RecallQuery,
  type RecallRequestInput,
  type RecallTier,
  type StoreFilter,
  type TemporalConstraint,
  type TierHit,
} from '@engram/core';
import {
  episodeText as indexedEpisodeText,
  episodeFromSource,
  memoryFromSource,
  turnFromSource,
  vectorOfSource,
  type Candidates,
  type EpisodeDocument,
  type MemoryDocument,
  type TurnDocument,
} from '@engram/elasticsearch';
import { Logger } from '@nestjs/common';
import type { AccessTracker } from './access-tracker';
import type { RecallStore } from './recall-store';

interface HitBase extends TierHit {
  /** Display text: a stale memory carries the `[STALE — …]` prefix. */
  text: string;
  /** The score as one line a person can check (explainScore). */
  explanation: string;
  provenance: Provenance;
}

/** One result of a recall, whatever its tier. */
export type RecallHit =
  | (HitBase & { tier: 'memories'; memory: RankedMemory })
  | (HitBase & { tier: 'episodes'; episode: Episode })
  | (HitBase & { tier: 'turns'; turn: PromptSubmitted });

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
 * Candidates per list for a recall of k: over-fetched, because the core drops some (filters it
 * checks itself, e.g. relatedFiles; stale exclusion) and fusion promotes documents found by only
 * one of the two lists.
 */
export function candidatesPerList(k: number): number {
  return Math.min(300, Math.max(30, 3 * k));
}

type TierCandidates =
  | { tier: 'memories'; candidates: Candidates<MemoryDocument> }
  | { tier: 'episodes'; candidates: Candidates<EpisodeDocument> }
  | { tier: 'turns'; candidates: Candidates<TurnDocument> };

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
  }

  get embeddingModel(): string {
    return this.embedder.id;
  }

  /** Throws InvalidRecallRequestError (naming the field) for a request that cannot be answered. */
  async recall(input: RecallRequestInput): Promise<RecallAnswer> {
    const query = parseRecallRequest(input);
    const started = performance.now();
    const temporal = await this.resolveTemporal(query);
    // BM25 needs no vector: its searches run in the store while the query is embedded here.
    const lexical = this.searchTiers(query, temporal, { text: query.query, vector: null });
    lexical.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    const embedding = performance.now();
    const vector = await this.embedQuery(query.query);
    const embedded = performance.now();
    const first = await this.rankWith(query, temporal, lexical, vector);
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
        )
      : null;
    const hydeMs = hypothetical ? performance.now() - hydeStarted - (second?.searchMs ?? 0) : 0;
    const merged = (second ?? first).hits;
    const results = await this.withTurnEpisodes(query, merged);
    if (query.track) {
      this.access?.record(
        results.flatMap((hit) =>
          hit.tier === 'memories' ? [accessHitOf(query.scope, hit.memory.memory)] : [],
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
   * and merged into one list of k.
   */
  private async rankWith(
    query: RecallQuery,
    temporal: TemporalConstraint | undefined,
    lexical: Promise<TierCandidates[]>,
    vector: ModelVector,
  ): Promise<{ hits: RecallHit[]; searchMs: number; rankMs: number }> {
    const started = performance.now();
    // A lexical-only recall (no embedding model) has no kNN list.
    const [bm25, knn] = await Promise.all([
      lexical,
      vector.dimension > 0 ? this.searchTiers(query, temporal, { text: null, vector }) : null,
    ]);
    const searched = performance.now();
    const now = this.clock();
    const hits = this.merge(
      query,
      bm25.map((found, i) => this.rankTier(withKnn(found, knn?.[i]), query, vector, temporal, now)),
    );
    return { hits, searchMs: searched - started, rankMs: performance.now() - searched };
  }

  /**
   * The tiers' lists as one (mergeAcrossTiers): relevance on one scale for every tier, and one
   * result per source — an episode, its turns and the memories distilled from them shown once,
   * with the provenance of all of them. A result ranks by its group's best member; its score's
   * other components, and the explanation, are those of the member shown.
   */
  private merge(query: RecallQuery, lists: RecallHit[][]): RecallHit[] {
    const groups = mergeAcrossTiers<RecallHit>(
      {
        lists,
        k: query.k,
        query: query.query,
        textOf: (hit) => {
          switch (hit.tier) {
            case 'memories':
              return hit.memory.memory.content; // not the display text: no [STALE — …] prefix
            case 'episodes':
              return indexedEpisodeText(hit.episode);
            case 'turns':
              return hit.text;
          }
        },
        confidenceOf: (hit) => (hit.tier === 'memories' ? hit.memory.confidence : null),
      },
      this.config,
    );
    const results = groups.map((group): RecallHit => {
      const shown = group.representative;
      const others = group.members.filter((m) => m !== shown);
      const explanation =
        (shown === group.best
          ? ''
          : `group final ${group.finalScore.toFixed(4)} from its best, ${group.best.tier} ${group.best.id}; shown: `) +
        explainScore(group.score, this.config.hybrid, this.config.priors) +
        `; query-term coverage ${group.coverage.toFixed(4)}` +
        crossTierNote(group.relevance) +
        (others.length > 0
          ? `; one source with ${others.map((m) => `${m.tier} ${m.id}`).join(', ')}`
          : '');
      return {
        ...shown,
        score: { ...group.score, finalScore: group.finalScore },
        provenance: group.provenance,
        explanation,
      };
    });
    // A superseded memory is shown (penalised, prefixed) but never above its successor.
    return supersededAfterSuccessors(results, (hit) =>
      hit.tier === 'memories' ? hit.memory.memory : null,
    );
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

  private rankTier(
    found: TierCandidates,
    query: RecallQuery,
    vector: ModelVector,
    temporal: TemporalConstraint | undefined,
    now: number,
  ): RecallHit[] {
    // Every candidate ranked, not k: the merge collapses one source's results into one, so k
    // results are k sources whenever the candidates hold them.
    const common = {
      phase: query.phase,
      now,
      bm25: found.candidates.bm25,
      knn: found.candidates.knn,
      query: vector,
    };
    // Explained by the merge, on the cross-tier scale, for the k results it keeps.
    const explanation = '';
    switch (found.tier) {
      case 'memories':
        return rankMemories(
          {
            ...common,
            filter: this.memoryFilter(query, temporal),
            memories: [...found.candidates.sources.values()].map(memoryFromSource),
          },
          this.config,
        ).map((memory) => ({
          tier: 'memories',
          id: memory.memory.memoryId,
          score: memory.score,
          text: memory.content,
          explanation,
          provenance: memory.provenance,
          memory,
        }));
      case 'episodes': {
        const { records, vectors } = recordsAndVectors(found.candidates, episodeFromSource);
        return rankEpisodes(
          { ...common, scope: query.scope, episodes: records, vectors, temporal },
          this.config,
        ).map(({ episode, score, provenance }) => ({
          tier: 'episodes',
          id: episode.episodeId,
          score,
          text: episodeText(episode),
          explanation,
          provenance,
          episode,
        }));
      }
      case 'turns': {
        const { records, vectors } = recordsAndVectors(found.candidates, turnFromSource);
        return rankTurns(
          { ...common, scope: query.scope, turns: records, vectors, temporal },
          this.config,
        ).map(({ turn, score, provenance }) => ({
          tier: 'turns',
          id: turn.eventId,
          score,
          text: turn.text,
          explanation,
          provenance,
          turn,
        }));
      }
    }
  }
}

/**
 * Which reading gave the cross-tier relevance (recall-merge.ts crossTierRelevance): said only when
 * the semantic one did, i.e. when the query-term coverage did not count.
 */
function crossTierNote(relevance: CrossTierRelevance): string {
  if (relevance.semantic <= relevance.lexical) return '';
  return (
    `; relevance ${relevance.relevance.toFixed(4)} semantic (cosine rank #${relevance.cosineRank} ` +
    `of all tiers), over lexical ${relevance.lexical.toFixed(4)}`
  );
}

/** Which candidate lists a search asks for: BM25 with a text, kNN with a vector. */
interface CandidateLists {
  text: string | null;
  vector: ModelVector | null;
}

/**
 * A tier's BM25 candidates with its kNN ones. A document in both keeps the BM25 `_source`: it
 * carries the stored vector, for the core's exact cosine (kNN hits come with their cosine).
 */
function withKnn(lexical: TierCandidates, semantic: TierCandidates | undefined): TierCandidates {
  if (semantic === undefined) return lexical;
  const candidates = {
    bm25: lexical.candidates.bm25,
    knn: semantic.candidates.knn,
    sources: new Map<string, unknown>([
      ...semantic.candidates.sources,
      ...lexical.candidates.sources,
    ]),
  };
  return { tier: lexical.tier, candidates } as TierCandidates;
}

/** Records rebuilt from `_source`, and the vectors stored beside them (by document id). */
function recordsAndVectors<
  S extends { embedding: number[] | null; embeddingModel: string | null },
  R,
>(
  candidates: Candidates<S>,
  toRecord: (source: S) => R,
): { records: R[]; vectors: Map<string, ModelVector> } {
  const records: R[] = [];
  const vectors = new Map<string, ModelVector>();
  for (const [id, source] of candidates.sources) {
    records.push(toRecord(source));
    const vector = vectorOfSource(source);
    if (vector) vectors.set(id, vector);
  }
  return { records, vectors };
}

/** What an episode was about, in the fewest words that say it: summary, else intent. */
export function episodeText(episode: Episode): string {
  return (
    episode.summary?.trim() ||
    episode.intent?.trim() ||
    episode.intentKeywords.join(' ') ||
    episode.episodeId
  );
}
