/**
 * Fits the learned boundary rule of hybrid mode (libs/core/src/segmentation/learned-boundary.ts)
 * on the TRAINING sets only: `segmentation.js --fit` prints the model to paste as
 * DEFAULT_LEARNED_BOUNDARY_MODEL and the train/dev scores of the in-process replay.
 *
 * The replay mirrors hybrid mode's online path (terse prompts continue and add no embedding, an
 * episode without an embedding yet continues, 50 prompts close an episode) so the features are
 * those the segmenter sees. Round 0 takes the episode states from the gold segmentation; each
 * later round adds the rows of the states the previous model builds itself (DAgger-style), so the
 * model learns from the kind of episode it will be compared with. Rows are weighted so every set
 * counts the same; features are standardised for the L2 penalty and folded back into raw weights.
 */
import {
  aggregateScores,
  scoreSegmentation,
  type AggregateScores,
} from '../../../../libs/core/src/segmentation/metrics';
import { intentKeywords, wordCount } from '../../../../libs/core/src/segmentation/intent-keywords';
import { embeddingCosine } from '../../../../libs/core/src/segmentation/topic-similarity';
import { jaccardOfUnique } from '../../../../libs/core/src/segmentation/intent-keywords';
import {
  LEARNED_BOUNDARY_FEATURES,
  learnedBoundaryFeatures,
  learnedBoundaryScore,
  type LearnedBoundaryModel,
} from '../../../../libs/core/src/segmentation/learned-boundary';
import type { GoldLabel } from '../../segmentation/types';

const TIMEOUT_MS = 30 * 60_000;
const TERSE_WORDS = 5;
const MAX_PROMPTS = 50;

/** One prompt of a replayed session. */
export interface FitPrompt {
  text: string;
  timestamp: number;
  gold: boolean;
  embedding: readonly number[];
  /** The next prompt's embedding (look-ahead variant only). */
  next: readonly number[] | null;
  keywords: string[];
  terse: boolean;
}

export interface FitSet {
  name: string;
  sessions: FitPrompt[][];
}

/** Builds replay sessions from a set's PromptSubmitted lines, labels and embeddings. */
export function fitSetOf(
  name: string,
  prompts: readonly string[],
  labels: readonly GoldLabel[],
  vectors: ReadonlyMap<string, readonly number[]>,
): FitSet {
  const gold = new Map(labels.map((label) => [label.eventId, label.goldBoundary]));
  const bySession = new Map<string, FitPrompt[]>();
  for (const line of prompts) {
    const p = JSON.parse(line) as {
      eventId: string;
      sessionId: string;
      text: string;
      timestamp: number;
    };
    const list = bySession.get(p.sessionId) ?? [];
    list.push({
      text: p.text,
      timestamp: Number(p.timestamp),
      gold: list.length === 0 || gold.get(p.eventId) === true,
      embedding: vectors.get(p.text)!,
      next: null,
      keywords: intentKeywords(p.text),
      terse: wordCount(p.text, TERSE_WORDS) < TERSE_WORDS,
    });
    bySession.set(p.sessionId, list);
  }
  const sessions = [...bySession.values()];
  for (const s of sessions) {
    for (let i = 0; i + 1 < s.length; i += 1) s[i].next = s[i + 1].embedding;
  }
  return { name, sessions };
}

/** Candidate features beyond the core's (explored by --fit; the core keeps the chosen ones). */
export const EXTRA_FEATURES = [
  'cosWindow2',
  'jaccardPrevious',
  'words',
  'aheadCosPrompt',
  'aheadCosEpisode',
] as const;

interface Episode {
  recent: number[][];
  sum: number[] | null;
  bag: string[];
  count: number;
  lastKeywords: string[];
}

const emptyEpisode = (): Episode => ({
  recent: [],
  sum: null,
  bag: [],
  count: 0,
  lastKeywords: [],
});

function addTo(episode: Episode, keywords: readonly string[], embedding: readonly number[] | null) {
  episode.count += 1;
  for (const k of keywords) if (!episode.bag.includes(k)) episode.bag.push(k);
  if (keywords.length > 0) episode.lastKeywords = [...keywords];
  if (embedding) {
    episode.sum = episode.sum ? episode.sum.map((v, i) => v + embedding[i]) : [...embedding];
    episode.recent.push([...embedding]);
    if (episode.recent.length > 2) episode.recent.shift();
  }
}

/** Every candidate feature: the core's, then EXTRA_FEATURES. */
function allFeatures(p: FitPrompt, keywords: string[], e: Episode, longGap: boolean): number[] {
  const core = learnedBoundaryFeatures({
    embedding: p.embedding,
    previous: e.recent[e.recent.length - 1] ?? null,
    centroidSum: e.sum,
    keywords,
    bag: e.bag,
    episodePrompts: e.count,
    afterLongGap: longGap,
  });
  const window =
    e.recent.length === 2 ? e.recent[0].map((v, i) => v + e.recent[1][i]) : e.recent[0];
  return [
    ...core,
    embeddingCosine(p.embedding, window) ?? 0,
    jaccardOfUnique(keywords, e.lastKeywords),
    Math.log1p(wordCount(p.text)),
    p.next ? (embeddingCosine(p.next, p.embedding) ?? 0) : 0,
    p.next ? (embeddingCosine(p.next, e.sum) ?? 0) : 0,
  ];
}

export interface Row {
  x: number[];
  y: number;
  set: number;
}

/**
 * Replays one session: `decide` (null: follow the gold boundaries) places each prompt; returns
 * the predicted boundaries and the rows of the prompts the model was asked about.
 */
function replay(
  session: readonly FitPrompt[],
  decide: ((x: number[]) => boolean) | null,
  set: number,
  rows: Row[] | null,
): boolean[] {
  const out: boolean[] = [];
  let episode = emptyEpisode();
  session.forEach((p, i) => {
    // Opening an episode (first prompt, boundary, size limit) takes the prompt's keywords and
    // embedding whatever its length, as openEpisode() does.
    const open = (): void => {
      episode = emptyEpisode();
      addTo(episode, p.keywords, p.embedding);
      out.push(true);
    };
    if (i === 0 || episode.count >= MAX_PROMPTS) return open();
    const longGap = p.timestamp - session[i - 1].timestamp > TIMEOUT_MS;
    if (!longGap && p.terse) {
      // terse: a continuation that adds no keyword and no embedding
      if (decide === null && p.gold) return open();
      addTo(episode, [], null);
      out.push(false);
      return;
    }
    const keywords = p.keywords;
    const x = allFeatures(p, keywords, episode, longGap);
    rows?.push({ x, y: p.gold ? 1 : 0, set });
    if (decide === null ? p.gold : decide(x)) return open();
    addTo(episode, keywords, p.embedding);
    out.push(false);
  });
  return out;
}

export function scoreSet(set: FitSet, decide: ((x: number[]) => boolean) | null): AggregateScores {
  return aggregateScores(
    set.sessions.map((s) =>
      scoreSegmentation(
        s.map((p) => p.gold),
        decide === null ? s.map((_, i) => i === 0) : replay(s, decide, 0, null),
      ),
    ),
  );
}

/** Standardised L2 logistic regression (Newton steps), weights folded back to raw features. */
export function fitLogistic(
  rows: readonly Row[],
  columns: readonly number[],
  setWeights: readonly number[],
  lambda: number,
): { bias: number; weights: number[] } {
  const d = columns.length;
  const n = rows.length;
  const mean = new Array<number>(d).fill(0);
  const sd = new Array<number>(d).fill(0);
  let wsum = 0;
  for (const r of rows) {
    const w = setWeights[r.set];
    wsum += w;
    columns.forEach((c, j) => (mean[j] += w * r.x[c]));
  }
  for (let j = 0; j < d; j += 1) mean[j] /= wsum;
  for (const r of rows) {
    columns.forEach((c, j) => (sd[j] += setWeights[r.set] * (r.x[c] - mean[j]) ** 2));
  }
  for (let j = 0; j < d; j += 1) sd[j] = Math.sqrt(sd[j] / wsum) || 1;
  const z = rows.map((r) => [1, ...columns.map((c, j) => (r.x[c] - mean[j]) / sd[j])]);
  const beta = new Array<number>(d + 1).fill(0);
  for (let iter = 0; iter < 30; iter += 1) {
    const grad = new Array<number>(d + 1).fill(0);
    const hess = Array.from({ length: d + 1 }, () => new Array<number>(d + 1).fill(0));
    for (let i = 0; i < n; i += 1) {
      const w = setWeights[rows[i].set] / wsum;
      const zi = z[i];
      let s = 0;
      for (let j = 0; j <= d; j += 1) s += beta[j] * zi[j];
      const p = 1 / (1 + Math.exp(-s));
      const g = w * (p - rows[i].y);
      const h = w * p * (1 - p);
      for (let j = 0; j <= d; j += 1) {
        grad[j] += g * zi[j];
        for (let k = 0; k <= d; k += 1) hess[j][k] += h * zi[j] * zi[k];
      }
    }
    for (let j = 1; j <= d; j += 1) {
      grad[j] += lambda * beta[j];
      hess[j][j] += lambda;
    }
    const step = solve(hess, grad);
    let change = 0;
    for (let j = 0; j <= d; j += 1) {
      beta[j] -= step[j];
      change = Math.max(change, Math.abs(step[j]));
    }
    if (change < 1e-8) break;
  }
  const weights = new Array<number>(LEARNED_BOUNDARY_FEATURES.length + EXTRA_FEATURES.length).fill(
    0,
  );
  let bias = beta[0];
  columns.forEach((c, j) => {
    weights[c] = beta[j + 1] / sd[j];
    bias -= (beta[j + 1] * mean[j]) / sd[j];
  });
  return { bias, weights };
}

function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c += 1) {
    let pivot = c;
    for (let r = c + 1; r < n; r += 1) if (Math.abs(m[r][c]) > Math.abs(m[pivot][c])) pivot = r;
    [m[c], m[pivot]] = [m[pivot], m[c]];
    for (let r = 0; r < n; r += 1) {
      if (r === c || m[c][c] === 0) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k <= n; k += 1) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((row, i) => (row[i] === 0 ? 0 : row[n] / row[i]));
}

export interface FitResult {
  model: LearnedBoundaryModel;
  /** The full weight vector (core features then EXTRA_FEATURES; unused ones 0). */
  allWeights: number[];
  trainPk: number;
}

const decider =
  (bias: number, weights: readonly number[], threshold: number) =>
  (x: number[]): boolean =>
    learnedBoundaryScore(x, { bias, weights }) >= threshold;

/** Fits with DAgger rounds and picks the threshold that minimises the mean training Pk. */
export function fitLearnedBoundary(
  train: readonly FitSet[],
  columns: readonly number[],
  options: { lambda?: number; rounds?: number; select?: 'pk' | 'f1' } = {},
): FitResult {
  const nevers = train.map((set) => scoreSet(set, null).pk);
  const lambda = options.lambda ?? 0.01;
  const rounds = options.rounds ?? 2;
  const rows: Row[] = [];
  train.forEach((set, s) => set.sessions.forEach((session) => replay(session, null, s, rows)));
  let fitted = { bias: 0, weights: [] as number[] };
  let threshold = 0.5;
  let bestPk = Infinity;
  for (let round = 0; round <= rounds; round += 1) {
    const counts = train.map((_, s) => rows.filter((r) => r.set === s).length);
    fitted = fitLogistic(
      rows,
      columns,
      counts.map((c) => 1 / Math.max(1, c)),
      lambda,
    );
    bestPk = Infinity;
    for (let t = 0.1; t <= 0.91; t += 0.02) {
      const decide = decider(fitted.bias, fitted.weights, t);
      const scores = train.map((set) => scoreSet(set, decide));
      const pk = scores.reduce((sum, m) => sum + m.pk, 0) / train.length;
      // select 'f1': the best mean F1 among the thresholds with Pk below never on every set
      const objective =
        options.select === 'f1'
          ? scores.every((m, s) => m.pk < nevers[s])
            ? -scores.reduce((sum, m) => sum + m.boundaries.f1, 0) / train.length
            : Infinity
          : pk;
      if (objective < bestPk) {
        bestPk = objective;
        threshold = t;
      }
    }
    if (round < rounds) {
      const decide = decider(fitted.bias, fitted.weights, threshold);
      train.forEach((set, s) =>
        set.sessions.forEach((session) => replay(session, decide, s, rows)),
      );
    }
  }
  return {
    model: {
      bias: fitted.bias,
      weights: LEARNED_BOUNDARY_FEATURES.map((_, i) => fitted.weights[i] ?? 0),
      threshold: Math.round(threshold * 100) / 100,
    },
    allWeights: fitted.weights,
    trainPk: bestPk,
  };
}

export { decider as learnedDecider };
