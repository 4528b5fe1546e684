import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import stem from 'wink-porter2-stemmer';
import { BoundedMemo } from '../segmentation/bounded-memo';
import { MAX_WORD_LENGTH } from '../segmentation/intent-keywords';
import { relevanceOf } from './fusion';
import { priorFactors } from './hybrid-score';
import { compareText } from './ordering';
import type { Provenance } from './provenance';
import type { RankingConfig } from './ranking-config';
import { RECALL_TIERS, type RecallTier } from './recall-request';
import { maxRrfScore } from './rrf';
import type { ScoreComponents } from './score-components';

/** One ranked result of one tier, whatever its document. */
export interface TierHit {
  tier: RecallTier;
  id: string;
  score: ScoreComponents;
}

function tierOrder(tier: RecallTier): number {
  return RECALL_TIERS.indexOf(tier);
}

/** A hit the cross-tier merge can compare and collapse: its provenance and its own text. */
export interface MergeableHit extends TierHit {
  provenance: Provenance;
}

export interface CrossTierMergeInput<H extends MergeableHit> {
  lists: readonly (readonly H[])[];
  k: number;
  /** The query as typed. */
  query: string;
  /** The text a hit was found by (a memory's content, an episode's indexed text, a turn). */
  textOf: (hit: H) => string;
  /** A memory's confidence; null for raw history (episodes, turns). */
  confidenceOf: (hit: H) => number | null;
}

/** One result of a cross-tier recall: documents of one source, shown as one. */
export interface MergedGroup<H extends MergeableHit> {
  /** The member shown: the most confident memory within the band of the best, else the best. */
  representative: H;
  /** Every member, best first (the representative among them). */
  members: H[];
  /** The best member: it ranks the group. */
  best: H;
  /** The representative's own components, relevance and final score on the cross-tier scale. */
  score: ScoreComponents;
  /** The group's score: its best member's final score (what the groups are ordered by). */
  finalScore: number;
  /** The members' provenance together: every session, episode, prompt and event behind them. */
  provenance: Provenance;
  /** The query-term coverage of the representative's text, in [0, 1]. */
  coverage: number;
  /** How the representative's cross-tier relevance was reached (crossTierRelevance). */
  relevance: CrossTierRelevance;
}

const STOP_WORDS = new Set(ENGLISH_STOP_WORDS);

/**
 * Porter2 per word, remembered: every recall stems its candidates' texts again (≈ 30 µs a text
 * uncached), and their vocabulary repeats from one recall to the next.
 */
const stems = new BoundedMemo<string>(stem, 100_000, MAX_WORD_LENGTH);

/**
 * Lower-case stems of the content words of a text, each once. A run longer than MAX_WORD_LENGTH
 * is a blob (base64, a hash), not a word, and Porter2's suffix regexes are quadratic on it
 * (issue #19): skipped, as intentKeywords does.
 */
export function contentStems(text: string): Set<string> {
  const found = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (word.length <= MAX_WORD_LENGTH && !STOP_WORDS.has(word)) found.add(stems.get(word));
  }
  return found;
}

/**
 * Share of the query's content words a text contains, each weighted by its IDF among the
 * candidates of all tiers together (ln(1 + N / (1 + n))): a word every candidate has says little,
 * a word only this one has says much. The same scale for every tier, which a tier's own BM25 rank
 * is not (the best of a weak tier ranks first in it). 0 for a query without content words.
 */
export function queryCoverage(
  queryStems: ReadonlySet<string>,
  documents: readonly ReadonlySet<string>[],
): number[] {
  const n = documents.length;
  const idf = new Map<string, number>();
  let total = 0;
  for (const term of queryStems) {
    const withTerm = documents.filter((doc) => doc.has(term)).length;
    const weight = Math.log(1 + n / (1 + withTerm));
    idf.set(term, weight);
    total += weight;
  }
  return documents.map((doc) => {
    if (total === 0) return 0;
    let found = 0;
    for (const [term, weight] of idf) if (doc.has(term)) found += weight;
    return found / total;
  });
}

/** The cross-tier relevance of one hit and the two readings it is the larger of. */
export interface CrossTierRelevance {
  relevance: number;
  /** relevanceOf((1 − c)·fusedNormalised + c·coverage, cosine): the tier's rank fusion and coverage. */
  lexical: number;
  /** relevanceOf(the RRF share of its cosine rank among all candidates, cosine); 0 without a cosine. */
  semantic: number;
  /** 1-based rank of its cosine among the candidates of every tier; 0 when it has none. */
  cosineRank: number;
}

/**
 * The cross-tier relevance, the larger of two readings of the evidence, both on one scale for
 * every tier:
 *   lexical  = relevanceOf((1 − c)·fusedNormalised + c·coverage, cosine)
 *   semantic = relevanceOf(rrfShare(cosineRank), cosine)
 * The lexical reading is fusion's relevance with the tier's normalised rank fusion sharing its
 * weight with the query-term coverage (a tier's rank alone cannot tell a strong match from the best
 * of a weak tier). The semantic reading is what the embedding alone says: the cosine (one model,
 * comparable across tiers) and its rank among the candidates of all tiers, weighed as fusion weighs
 * a kNN-only hit of that rank (1 / (rrfK + rank) over the two-list maximum). Coverage is 0 for a
 * paraphrase by construction, so it must never count against one: without the semantic reading a
 * pure paraphrase with the best cosine lost to a document whose only lexical tie was one common
 * word ("when") that put it second of a two-hit BM25 list (integration recall test, m-pool).
 * A stop-word-only query (null coverage), or a lexical-only recall (no query vector: no cosine),
 * keeps the tier's relevance.
 */
export function crossTierRelevance(
  score: ScoreComponents,
  coverage: number | null,
  cosineRank: number,
  config: RankingConfig,
): CrossTierRelevance {
  const kept = { relevance: score.relevance, lexical: score.relevance, semantic: 0, cosineRank };
  if (score.relevanceBasis !== 'query' || coverage === null) return kept;
  const hasQueryVector = score.cosineStatus !== 'no_query_vector';
  const c = config.crossTier.coverage;
  const lexical = relevanceOf(
    (1 - c) * score.fusedNormalised + c * coverage,
    score.knn,
    hasQueryVector,
    config,
  );
  const semantic =
    hasQueryVector && cosineRank > 0
      ? relevanceOf(
          1 / (config.rrfK + cosineRank) / maxRrfScore(2, config.rrfK),
          score.knn,
          true,
          config,
        )
      : 0;
  return { relevance: Math.max(lexical, semantic), lexical, semantic, cosineRank };
}

/**
 * The rank of each hit's cosine among all hits' (1 + how many are strictly closer to the query);
 * 0 for a hit without a computed, positive cosine (no semantic evidence to rank).
 */
export function cosineRanks(scores: readonly ScoreComponents[]): number[] {
  const cosineOf = (s: ScoreComponents) => (s.cosineStatus === 'computed' && s.knn > 0 ? s.knn : 0);
  const sorted = scores.map(cosineOf).sort((a, b) => b - a);
  return scores.map((s) => {
    const cosine = cosineOf(s);
    if (cosine === 0) return 0;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] > cosine) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  });
}

/** The components again with another relevance (priors, phase and stale as they were). */
function rescored(
  score: ScoreComponents,
  relevance: number,
  config: Pick<RankingConfig, 'hybrid' | 'priors'>,
): ScoreComponents {
  const { base, phaseFactor } = priorFactors(
    relevance,
    score.recency,
    score.frequency,
    score.phaseWeight,
    config,
  );
  return { ...score, relevance, base, finalScore: base * phaseFactor * score.stalePenalty };
}

/** A hit on the cross-tier scale, with the evidence it was derived from (its event ids). */
interface Scored<H extends MergeableHit> {
  hit: H;
  coverage: number;
  relevance: CrossTierRelevance;
  score: ScoreComponents;
  events: ReadonlySet<string>;
}

/**
 * Two results of one source: they share an event (an episode and its own turns; a memory and the
 * turns or episode it was distilled from), or one is the episode the other names.
 */
function sameSource<H extends MergeableHit>(a: Scored<H>, b: Scored<H>): boolean {
  for (const id of a.events) if (b.events.has(id)) return true;
  const names = (x: MergeableHit, y: MergeableHit) =>
    x.tier === 'episodes' && y.provenance.episodeIds.includes(x.id);
  return names(a.hit, b.hit) || names(b.hit, a.hit);
}

/**
 * Group index of every hit (the index of its group's best member; hits in score order). Raw
 * history groups by shared source: an episode with its own turns (a turn is in one episode,
 * so these groups cannot chain). A memory joins the best raw group it was distilled from, and
 * only one: a memory whose events span several episodes (a work state, a fact reinforced in
 * two sessions) must not weld them into one result. Memories are never grouped with each other:
 * two memories of one prompt are two statements, not one said twice.
 */
function groupOf<H extends MergeableHit>(scored: readonly Scored<H>[]): number[] {
  const parent = scored.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  const join = (i: number, j: number) => {
    const [ri, rj] = [find(i), find(j)];
    if (ri !== rj) parent[Math.max(ri, rj)] = Math.min(ri, rj);
  };
  const isMemory = (i: number) => scored[i].hit.tier === 'memories';
  const raw = scored.flatMap((_, i) => (isMemory(i) ? [] : [i]));
  for (const [n, i] of raw.entries()) {
    for (const j of raw.slice(n + 1)) if (sameSource(scored[i], scored[j])) join(i, j);
  }
  scored.forEach((memory, i) => {
    if (!isMemory(i)) return;
    const sources = raw.filter((j) => sameSource(memory, scored[j])).map(find);
    if (sources.length > 0) join(i, Math.min(...sources));
  });
  return scored.map((_, i) => find(i));
}

function unionProvenance(members: readonly MergeableHit[], shown: MergeableHit): Provenance {
  const all = members.map((m) => m.provenance);
  const union = <T>(pick: (p: Provenance) => readonly T[]) => [...new Set(all.flatMap(pick))];
  return {
    ...shown.provenance,
    sessionIds: union((p) => p.sessionIds),
    episodeIds: union((p) => p.episodeIds),
    promptIds: union((p) => p.promptIds).sort((x, y) => x - y),
    eventIds: union((p) => p.eventIds),
  };
}

/**
 * Recall across tiers (issue #23): relevance on one scale for every tier (crossTierRelevance),
 * then one result per source (groupOf) — an episode, its own turns and the memories distilled
 * from them are one result carrying all their provenance, not several slots saying the same —
 * ordered by their best member, at most k. The member shown is the most confident memory scoring
 * within `crossTier.memoryBand` of the best member (the distilled statement of the lesson rather
 * than the raw prompt), else the best member. Deterministic: ties by relevance, tier, then id.
 */
export function mergeAcrossTiers<H extends MergeableHit>(
  input: CrossTierMergeInput<H>,
  config: RankingConfig,
): MergedGroup<H>[] {
  const hits = input.lists.flat();
  const queryStems = contentStems(input.query);
  const coverage = queryCoverage(
    queryStems,
    hits.map((hit) => contentStems(input.textOf(hit))),
  );
  const covered = (i: number) => (queryStems.size > 0 ? coverage[i] : null);
  const ranks = cosineRanks(hits.map((hit) => hit.score));
  const scored: Scored<H>[] = hits
    .map((hit, i) => {
      const relevance = crossTierRelevance(hit.score, covered(i), ranks[i], config);
      return {
        hit,
        coverage: coverage[i],
        relevance,
        score: rescored(hit.score, relevance.relevance, config),
        events: new Set(hit.provenance.eventIds),
      };
    })
    .sort(
      (a, b) =>
        b.score.finalScore - a.score.finalScore ||
        b.score.relevance - a.score.relevance ||
        tierOrder(a.hit.tier) - tierOrder(b.hit.tier) ||
        compareText(a.hit.id, b.hit.id),
    );
  const groups = new Map<number, Scored<H>[]>();
  groupOf(scored).forEach((group, i) => {
    const members = groups.get(group) ?? [];
    members.push(scored[i]);
    groups.set(group, members);
  });
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .slice(0, Math.max(0, input.k))
    .map(([, members]) => {
      const best = members[0];
      const band = best.score.finalScore * config.crossTier.memoryBand;
      const memories = members
        .filter((m) => input.confidenceOf(m.hit) !== null && m.score.finalScore >= band)
        .sort(
          (a, b) =>
            (input.confidenceOf(b.hit) ?? 0) - (input.confidenceOf(a.hit) ?? 0) ||
            b.score.finalScore - a.score.finalScore,
        );
      const shown = memories[0] ?? best;
      return {
        representative: shown.hit,
        best: best.hit,
        members: members.map((m) => m.hit),
        score: shown.score,
        finalScore: best.score.finalScore,
        provenance: unionProvenance(
          members.map((m) => m.hit),
          shown.hit,
        ),
        coverage: shown.coverage,
        relevance: shown.relevance,
      };
    });
}
