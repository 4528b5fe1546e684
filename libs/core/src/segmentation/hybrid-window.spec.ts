import { describe, expect, it } from 'vitest';
import { decideBoundary } from './boundary';
import { intentKeywords } from './intent-keywords';
import { segmenterSettings, type SegmenterSettings } from './segmenter-settings';
import {
  comparedEmbedding,
  segmentPrompt,
  type PromptDecision,
  type SegmenterPrompt,
  type SessionState,
} from './session-segmenter';

const T0 = Date.UTC(2026, 1, 18, 9, 0, 0);

// Long prompts that share no keyword, so with weight 1 only the embeddings decide.
const TEXTS = [
  'refactor the billing invoice exporter module carefully',
  'rename parameters inside currency rounding helper functions',
  'document webhook retries against stripe sandbox environment',
  'profile memory usage during nightly batch reconciliation jobs',
];

function prompt(promptId: number, text: string): SegmenterPrompt {
  return {
    eventId: `event-${promptId}`,
    tenantId: 'acme',
    projectId: 'acme/api',
    sessionId: 'session-1',
    agentId: 'claude-code',
    userId: 'dev-1',
    timestamp: T0 + promptId * 60_000,
    promptId,
    source: 'user',
    channel: 'cli',
    channelKind: 'implicit',
    explicitThreadId: null,
    text,
    parentEpisodeId: null,
  };
}

function run(embeddings: number[][], settings: SegmenterSettings) {
  let state: SessionState | undefined;
  const decisions: PromptDecision[] = [];
  embeddings.forEach((embedding, index) => {
    const result = segmentPrompt(state, prompt(index + 1, TEXTS[index]), {
      settings,
      embedding,
    });
    state = result.state;
    decisions.push(result.decision);
  });
  return { state: state!, decisions };
}

const hybrid = (overrides: Partial<SegmenterSettings>): SegmenterSettings =>
  segmenterSettings({
    mode: 'hybrid',
    hybridRule: 'blend',
    hybridEmbeddingWeight: 1,
    hybridThreshold: 0.4,
    hybridMinIntentKeywords: 4,
    ...overrides,
  });

describe('hybrid mode: the prompt against the episode’s recent prompts (hybridWindow)', () => {
  // A topic that drifts step by step: each prompt is close to the one before it (cos 0.8, 0.6)
  // but far from where the episode started.
  const drifting = [
    [1, 0, 0],
    [0.8, 0.6, 0],
    [0, 1, 0],
  ];

  it('should follow a gradual drift with a window of 1 and split it against the whole episode', () => {
    const recent = run(drifting, hybrid({ hybridWindow: 1 }));
    expect(recent.decisions.map((d) => d.boundary)).toEqual([true, false, false]);
    expect(recent.decisions[2].similarity).toBeCloseTo(0.6, 6);

    // Whole-episode mean of [1,0,0] and [0.8,0.6,0]: cosine 0.6 / |(1.8, 0.6)| ≈ 0.316 < 0.4.
    const whole = run(drifting, hybrid({ hybridWindow: 0 }));
    expect(whole.decisions.map((d) => d.boundary)).toEqual([true, false, true]);
    expect(whole.decisions[2].similarity).toBeCloseTo(0.6 / Math.hypot(1.8, 0.6), 6);
  });

  it('should keep only the last hybridWindow embeddings in the state (it goes to the changelog)', () => {
    const { state } = run(
      [
        [1, 0, 0],
        [0.9, 0.1, 0],
        [0.8, 0.2, 0],
        [0.7, 0.3, 0],
      ],
      hybrid({ hybridWindow: 2 }),
    );
    expect(state.episode?.recentEmbeddings).toEqual([
      [0.8, 0.2, 0],
      [0.7, 0.3, 0],
    ]);
    expect(state.episode?.userPromptCount).toBe(4);
  });

  it('should store no recent embeddings with a window of 0 or in keyword mode', () => {
    expect(run(drifting, hybrid({ hybridWindow: 0 })).state.episode?.recentEmbeddings).toBe(
      undefined,
    );
    const keyword = run(drifting, segmenterSettings({ mode: 'keyword' }));
    expect(keyword.state.episode?.recentEmbeddings).toBe(undefined);
  });
});

describe('comparedEmbedding', () => {
  const episode = {
    centroidSum: [3, 1],
    recentEmbeddings: [
      [1, 0],
      [1, 0],
      [1, 1],
    ],
  };

  it('should sum the last hybridWindow embeddings', () => {
    expect(comparedEmbedding(episode, { hybridWindow: 2 })).toEqual([2, 1]);
    expect(comparedEmbedding(episode, { hybridWindow: 1 })).toEqual([1, 1]);
    expect(comparedEmbedding(episode, { hybridWindow: 5 })).toEqual([3, 1]);
  });

  it('should use the whole-episode sum with a window of 0', () => {
    expect(comparedEmbedding(episode, { hybridWindow: 0 })).toEqual([3, 1]);
  });

  it('should use the whole-episode sum for a state written before the window existed', () => {
    expect(comparedEmbedding({ centroidSum: [3, 1] }, { hybridWindow: 2 })).toEqual([3, 1]);
    expect(comparedEmbedding({ centroidSum: null }, { hybridWindow: 2 })).toBe(null);
  });
});

describe('hybridMinIntentKeywords', () => {
  const text = 'update billing invoice exporter tests'; // 5 words
  const keywords = intentKeywords(text);
  const signal = { text, gapMs: 60_000, timeoutMs: 30 * 60_000, embedding: [0, 1] };
  const episode = { bag: ['unrelated', 'topic', 'words', 'here'], centroid: [1, 0] };

  it('should gate hybrid prompts on hybridMinIntentKeywords, keyword ones on minIntentKeywords', () => {
    const n = keywords.length;
    const hybridVerdict = decideBoundary(
      episode,
      signal,
      segmenterSettings({
        mode: 'hybrid',
        hybridRule: 'blend',
        hybridMinIntentKeywords: n + 1,
        minIntentKeywords: 0,
      }),
    );
    expect(hybridVerdict.rule).toBe('low_signal');
    expect(hybridVerdict.boundary).toBe(false);

    const keywordVerdict = decideBoundary(
      episode,
      signal,
      segmenterSettings({ mode: 'keyword', minIntentKeywords: n, hybridMinIntentKeywords: n + 1 }),
    );
    expect(keywordVerdict.rule).toBe('intent_shift');
  });
});
