import { MisconfigurationError } from '../errors/engram-error';

/** How a prompt is compared with its episode (SPEC §4.2). */
export type SegmentationMode = 'keyword' | 'hybrid';

export interface SegmenterSettings {
  mode: SegmentationMode;
  /** Below this similarity a (non-terse) user prompt opens a new episode (seed 000: 0.3). */
  boundaryThreshold: number;
  /** Prompts with fewer words are continuations ("yes", "ok push", "5,6"; seed 000: 5). */
  tersePromptWords: number;
  /**
   * Prompts with fewer intent keywords than this are continuations too (0 turns the rule off).
   * Beyond the seed, for the seed's own reason: a bag of one to three keywords is "near-empty —
   * Jaccard is undefined or noisy" (a single shared word moves it by a third or more). Chosen on
   * the segmentation benchmark (test/bench/segmentation).
   */
  minIntentKeywords: number;
  /**
   * A gap longer than the thread timeout raises the threshold (a boundary becomes more likely):
   * `threshold = base + maxGapRaise · min(1, log2(gap / timeout) / log2(gapSaturationMs / timeout))`
   * for gap > timeout. With the defaults: 1 h → +0.075, 2 h → +0.15, 4 h → +0.225, ≥ 8 h → +0.3.
   */
  maxGapRaise: number;
  gapSaturationMs: number;
  /** An episode closes after this many user prompts (seed: 50) … */
  maxUserPrompts: number;
  /** … or when it has lasted this long (seed: 24 h). */
  maxEpisodeMs: number;
  /** Implicit channels: a gap longer than this opens a new thread (seed 004: 30 min). */
  inactivityTimeoutMinutes: number;
  /** Per-channel overrides of the timeout (e.g. `{ sms: 240 }`), then per-tenant ones. */
  inactivityTimeoutByChannel: Readonly<Record<string, number>>;
  inactivityTimeoutByTenant: Readonly<Record<string, number>>;
  /** hybrid mode: weight of the embedding cosine against Jaccard in the blended similarity. */
  hybridEmbeddingWeight: number;
  /** hybrid mode's boundary threshold on the blended similarity. */
  hybridThreshold: number;
  /**
   * hybrid mode: the prompt's embedding is compared with the mean of the episode's last
   * `hybridWindow` prompt embeddings (what the conversation is about now), not with the mean of
   * the whole episode, which drifts towards the generic as it grows. 0: the whole-episode mean
   * (hybrid before issue #23).
   */
  hybridWindow: number;
  /**
   * hybrid mode's `minIntentKeywords`: embeddings are meaningful for short prompts where a
   * keyword bag is not, so hybrid compares prompts with fewer keywords than keyword mode does.
   */
  hybridMinIntentKeywords: number;
  /**
   * hybrid mode's boundary rule: `learned` scores every non-terse prompt with the logistic model
   * of learned-boundary.ts (cosine to the previous prompt and to the episode mean, Jaccard with
   * the bag, keyword count, episode length, long gap), fitted on the training splits of the
   * segmentation benchmark; `blend` is the weighted cosine + Jaccard against `hybridThreshold`.
   * Absent: `blend`.
   */
  hybridRule?: 'blend' | 'learned';
  /** Chaining (seed 003): parent candidates closed within this window … */
  chainWindowMs: number;
  /** … whose topic similarity exceeds this. */
  chainMinSimilarity: number;
  /** Longest accepted prompt text (longer ones are dead-lettered). */
  maxPromptChars: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const DEFAULT_SEGMENTER_SETTINGS: Readonly<SegmenterSettings> = Object.freeze({
  mode: 'keyword',
  boundaryThreshold: 0.3,
  tersePromptWords: 5,
  minIntentKeywords: 4,
  maxGapRaise: 0.3,
  gapSaturationMs: 8 * HOUR,
  maxUserPrompts: 50,
  maxEpisodeMs: 24 * HOUR,
  inactivityTimeoutMinutes: 30,
  inactivityTimeoutByChannel: {},
  inactivityTimeoutByTenant: {},
  // hybrid: tuned on tiage/train, the SGD tuning files and the synthetic coding sessions
  // (test/bench/quality/segmentation.ts; issue #23). Before: weight 0.5, threshold 0.3, whole
  // episode, 4 keywords, which split about twice as often as the gold labels.
  hybridEmbeddingWeight: 0.8,
  hybridThreshold: 0.15,
  hybridWindow: 2,
  hybridMinIntentKeywords: 5,
  hybridRule: 'learned',
  chainWindowMs: 48 * HOUR,
  chainMinSimilarity: 0.85,
  maxPromptChars: 100_000,
});

/** The defaults with overrides, validated (validateSegmenterSettings). */
export function segmenterSettings(overrides: Partial<SegmenterSettings> = {}): SegmenterSettings {
  const settings = { ...DEFAULT_SEGMENTER_SETTINGS, ...overrides };
  validateSegmenterSettings(settings);
  return settings;
}

/** Throws MisconfigurationError naming the first key that cannot work. */
export function validateSegmenterSettings(settings: SegmenterSettings): void {
  if (settings.mode !== 'keyword' && settings.mode !== 'hybrid') {
    fail('mode', `must be keyword or hybrid, got ${String(settings.mode)}`);
  }
  const rule = settings.hybridRule;
  if (rule !== undefined && rule !== 'blend' && rule !== 'learned') {
    fail('hybridRule', `must be blend or learned, got ${String(rule)}`);
  }
  for (const key of [
    'boundaryThreshold',
    'maxGapRaise',
    'hybridEmbeddingWeight',
    'hybridThreshold',
    'chainMinSimilarity',
  ] as const) {
    const value = settings[key];
    if (!Number.isFinite(value) || value < 0 || value > 1) {
      fail(key, `must be within [0, 1], got ${value}`);
    }
  }
  for (const key of ['tersePromptWords', 'minIntentKeywords', 'hybridWindow'] as const) {
    count(key, settings[key], 0);
  }
  for (const key of ['maxUserPrompts', 'maxPromptChars'] as const) count(key, settings[key], 1);
  for (const key of ['gapSaturationMs', 'maxEpisodeMs', 'chainWindowMs'] as const) {
    positive(key, settings[key]);
  }
  positive('inactivityTimeoutMinutes', settings.inactivityTimeoutMinutes);
  for (const [scope, table] of [
    ['inactivityTimeoutByChannel', settings.inactivityTimeoutByChannel],
    ['inactivityTimeoutByTenant', settings.inactivityTimeoutByTenant],
  ] as const) {
    for (const [name, minutes] of Object.entries(table)) positive(`${scope}.${name}`, minutes);
  }
}

function fail(key: string, problem: string): never {
  throw new MisconfigurationError(`segmenter settings ${key}: ${problem}`, { key });
}

function count(key: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    fail(key, `must be an integer >= ${min}, got ${value}`);
  }
}

function positive(key: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    fail(key, `must be > 0, got ${value}`);
  }
}

/** The inactivity timeout for a channel of a tenant: channel override, tenant override, default. */
export function inactivityTimeoutMs(
  settings: SegmenterSettings,
  channel: string,
  tenantId: string,
): number {
  const minutes =
    settings.inactivityTimeoutByChannel[channel] ??
    settings.inactivityTimeoutByTenant[tenantId] ??
    settings.inactivityTimeoutMinutes;
  return minutes * MINUTE;
}

/** The boundary threshold after a gap (see SegmenterSettings.maxGapRaise for the formula). */
export function gapAdjustedThreshold(
  base: number,
  gapMs: number,
  timeoutMs: number,
  settings: Pick<SegmenterSettings, 'maxGapRaise' | 'gapSaturationMs'>,
): number {
  if (gapMs <= timeoutMs || timeoutMs <= 0) return base;
  const span = Math.log2(settings.gapSaturationMs / timeoutMs);
  const fraction = span > 0 ? Math.min(1, Math.log2(gapMs / timeoutMs) / span) : 1;
  return base + settings.maxGapRaise * fraction;
}
