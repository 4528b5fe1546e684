import type { Episode, PromptSubmitted } from '@engram/contracts';
import {
  rankEpisodes,
  rankMemories,
  rankTurns,
  type MemoryFilter,
  type ModelVector,
  type Provenance,
  type RankedMemory,
  type RankingConfig,
  type RecallQuery,
  type ReplacedMemory,
  type TemporalConstraint,
  type TierHit,
} from '@engram/core';
import { type Candidates } from '@engram/elasticsearch';
import {
  episodeFromSource,
  memoryFromSource,
  turnFromSource,
  vectorOfSource,
  type EpisodeDocument,
  type MemoryDocument,
  type TurnDocument,
} from '@engram/core';

// One tier of a recall: its candidates as the store found them, ranked by the pure core into
// hits of that tier (RecallService searches, then merges the tiers: recall-hit-merge.ts).

interface HitBase extends TierHit {
  /** Display text: a stale memory carries the `[STALE — …]` prefix, a session note its own. */
  text: string;
  /** The score as one line a person can check (explainScore). */
  explanation: string;
  provenance: Provenance;
}

/** One result of a recall, whatever its tier. */
export type RecallHit =
  | (HitBase & {
      tier: 'memories';
      memory: RankedMemory;
      /** The outdated memories folded under this one (foldOutdated), best first; absent: none. */
      replaces?: ReplacedMemory[];
    })
  | (HitBase & { tier: 'episodes'; episode: Episode })
  | (HitBase & { tier: 'turns'; turn: PromptSubmitted });

/**
 * Candidates per list for a recall of k: over-fetched, because the core drops some (filters it
 * checks itself, e.g. relatedFiles; stale exclusion) and fusion promotes documents found by only
 * one of the two lists.
 */
export function candidatesPerList(k: number): number {
  return Math.min(300, Math.max(30, 3 * k));
}

export type TierCandidates =
  | { tier: 'memories'; candidates: Candidates<MemoryDocument> }
  | { tier: 'episodes'; candidates: Candidates<EpisodeDocument> }
  | { tier: 'turns'; candidates: Candidates<TurnDocument> };

/** Which candidate lists a search asks for: BM25 with a text, kNN with a vector. */
export interface CandidateLists {
  text: string | null;
  vector: ModelVector | null;
}

/** What ranking a tier needs beyond its candidates. */
export interface TierRanking {
  query: RecallQuery;
  vector: ModelVector;
  /** The memories tier's filter (recall's MemoryFilter). */
  memoryFilter: MemoryFilter;
  temporal: TemporalConstraint | undefined;
  now: number;
}

/** A ranked memory as a hit of the memories tier (explained later, by the merge). */
export function memoryHit(memory: RankedMemory): RecallHit {
  return {
    tier: 'memories',
    id: memory.memory.memoryId,
    score: memory.score,
    text: memory.content,
    explanation: '',
    provenance: memory.provenance,
    memory,
  };
}

/**
 * Every candidate of a tier ranked, not k: the merge collapses one source's results into one, so
 * k results are k sources whenever the candidates hold them.
 */
export function rankTier(
  found: TierCandidates,
  ranking: TierRanking,
  config: RankingConfig,
): RecallHit[] {
  const { query, vector, temporal, now } = ranking;
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
          filter: ranking.memoryFilter,
          memories: [...found.candidates.sources.values()].map(memoryFromSource),
        },
        config,
      ).map(memoryHit);
    case 'episodes': {
      const { records, vectors } = recordsAndVectors(found.candidates, episodeFromSource);
      return rankEpisodes(
        { ...common, scope: query.scope, episodes: records, vectors, temporal },
        config,
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
        config,
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

/**
 * A tier's BM25 candidates with its kNN ones. A document in both keeps the BM25 `_source`: it
 * carries the stored vector, for the core's exact cosine (kNN hits come with their cosine).
 */
export function withKnn(
  lexical: TierCandidates,
  semantic: TierCandidates | undefined,
): TierCandidates {
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
