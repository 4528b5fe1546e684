// Ranking metrics over graded labels (relevance 1 or 2 per entry id; unlabelled = 0).

export type Labels = Readonly<Record<string, number>>;

/** Share of the relevant entries found in the first `k` results. */
export function recallAt(ranked: readonly string[], labels: Labels, k: number): number {
  const relevant = Object.keys(labels).filter((id) => labels[id] > 0);
  if (relevant.length === 0) throw new RangeError('a query needs at least one relevant entry');
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

/** Σ (2^rel − 1) / log2(rank + 1) over the first `k` gains. */
function dcg(gains: readonly number[], k: number): number {
  return gains.slice(0, k).reduce((sum, gain, i) => sum + (2 ** gain - 1) / Math.log2(i + 2), 0);
}

/** nDCG@k (Järvelin & Kekäläinen 2002) with exponential gain: a grade-2 hit counts 3×. */
export function ndcgAt(ranked: readonly string[], labels: Labels, k: number): number {
  const ideal = dcg(
    Object.values(labels).sort((a, b) => b - a),
    k,
  );
  if (ideal === 0) throw new RangeError('a query needs at least one relevant entry');
  return (
    dcg(
      ranked.map((id) => labels[id] ?? 0),
      k,
    ) / ideal
  );
}

export interface Scores {
  recall5: number;
  recall10: number;
  ndcg10: number;
}

export function scoreRanking(ranked: readonly string[], labels: Labels): Scores {
  return {
    recall5: recallAt(ranked, labels, 5),
    recall10: recallAt(ranked, labels, 10),
    ndcg10: ndcgAt(ranked, labels, 10),
  };
}

/** Means of each metric (0 for no rows). */
export function meanScores(rows: readonly Scores[]): Scores {
  const mean = (pick: (s: Scores) => number) =>
    rows.length === 0 ? 0 : rows.reduce((sum, row) => sum + pick(row), 0) / rows.length;
  return {
    recall5: mean((s) => s.recall5),
    recall10: mean((s) => s.recall10),
    ndcg10: mean((s) => s.ndcg10),
  };
}
