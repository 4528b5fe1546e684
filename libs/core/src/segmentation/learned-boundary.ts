import { jaccardOfUnique } from './intent-keywords';
import { embeddingCosine } from './topic-similarity';

/**
 * A learned online boundary rule for hybrid mode (issue #23): logistic regression over a few
 * features of prompt i that only look at prompts ≤ i. Pure: no I/O.
 */

/** The features, in the order of `LearnedBoundaryModel.weights`. */
export const LEARNED_BOUNDARY_FEATURES = [
  /** Cosine of the prompt's embedding with the previous (non-terse) prompt's of the episode. */
  'cosPrevious',
  /** Cosine with the mean of the episode's embeddings (the whole episode so far). */
  'cosEpisode',
  /** Jaccard of the prompt's intent keywords with the episode bag. */
  'jaccardBag',
  /** ln(1 + intent keywords of the prompt). */
  'keywords',
  /** ln(1 + user prompts in the episode so far): the shortness prior. */
  'episodeLength',
  /** 1 after a gap longer than the thread timeout, else 0. */
  'longGap',
] as const;
export type LearnedBoundaryFeature = (typeof LEARNED_BOUNDARY_FEATURES)[number];

export interface LearnedBoundaryModel {
  bias: number;
  /** One weight per LEARNED_BOUNDARY_FEATURES entry, in that order, on the raw feature values. */
  weights: readonly number[];
  /** A boundary when the logistic score is at least this. */
  threshold: number;
}

/** What the features read of the open episode and the prompt. */
export interface LearnedBoundaryInput {
  embedding: readonly number[];
  /** The episode's most recent prompt embedding (null: none yet). */
  previous: readonly number[] | null;
  /** The sum of the episode's prompt embeddings (null: none yet). */
  centroidSum: readonly number[] | null;
  keywords: readonly string[];
  bag: readonly string[];
  episodePrompts: number;
  afterLongGap: boolean;
}

/** The feature vector, in LEARNED_BOUNDARY_FEATURES order. */
export function learnedBoundaryFeatures(input: LearnedBoundaryInput): number[] {
  return [
    embeddingCosine(input.embedding, input.previous) ?? 0,
    embeddingCosine(input.embedding, input.centroidSum) ?? 0,
    jaccardOfUnique(input.keywords, input.bag),
    Math.log1p(input.keywords.length),
    Math.log1p(input.episodePrompts),
    input.afterLongGap ? 1 : 0,
  ];
}

/** The logistic score in (0, 1): the estimated chance that the prompt opens a new episode. */
export function learnedBoundaryScore(
  features: readonly number[],
  model: Pick<LearnedBoundaryModel, 'bias' | 'weights'>,
): number {
  let z = model.bias;
  for (let i = 0; i < features.length; i += 1) z += (model.weights[i] ?? 0) * features[i];
  return 1 / (1 + Math.exp(-z));
}

/**
 * The default model, fitted by `bash test/bench/quality/run.sh --only segmentation` having compiled
 * the benchmark, then `node .cache/bench/quality-js/test/bench/quality/segmentation.js --fit
 * --select f1` (test/bench/quality/segmentation/learned-fit.ts): L2-regularised (λ 0.01 on
 * standardised features) logistic regression on the TRAINING splits only — tiage/train, SGD
 * files 001/044/045/046 with domain and with intent labels, the synthetic coding sessions — each
 * set weighted equally, on the features of the episodes the rule builds itself (gold episodes,
 * then two rounds adding its own states). The threshold is the one with the best mean F1 among
 * those whose Pk is below never-split on every training set. Dev sets were only scored.
 */
export const DEFAULT_LEARNED_BOUNDARY_MODEL: Readonly<LearnedBoundaryModel> = Object.freeze({
  bias: -1.9689,
  // cosPrevious, cosEpisode, jaccardBag, keywords, episodeLength, longGap
  weights: Object.freeze([-1.8594, 0.3106, -0.4239, 0.7447, 0.0344, 1.4207]),
  threshold: 0.4,
});

/**
 * The same rule without embeddings (issue #23): what hybrid mode runs when the embedding model is
 * not installed, instead of seed 000's keyword rule, which over-splits every public set (Pk worse
 * than never splitting). Fitted like the default on the lexical features alone
 * (`segmentation.js --fit --columns 2,3,4,5 --select f1`); the cosine weights are 0. On the dev
 * splits it splits rarely in chat (Pk = never-split on TIAGE, −0.003 on SGD) and it halves the
 * keyword rule's error on coding sessions (synthetic Pk 0.314 vs never 0.394, keyword 0.476).
 */
export const LEXICAL_LEARNED_BOUNDARY_MODEL: Readonly<LearnedBoundaryModel> = Object.freeze({
  bias: -2.3008,
  // cosPrevious, cosEpisode, jaccardBag, keywords, episodeLength, longGap
  weights: Object.freeze([0, 0, -1.6566, 0.7678, 0.0324, 1.5765]),
  threshold: 0.4,
});
