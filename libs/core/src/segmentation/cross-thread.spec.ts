import { describe, expect, it, vi } from 'vitest';
import {
  scoreContinuity,
  type CrossThreadCandidate,
  type CrossThreadOpening,
} from './cross-thread';
import {
  algorithmicConfidence,
  combineDecisions,
  decideCrossThreadLink,
  decideCrossThreadLinkAlgorithmically,
  type LinkDecisionRecord,
} from './cross-thread-decision';
import type {
  ContinuityAssessmentInput,
  LlmContinuityAssessment,
  LlmContinuityAssessor,
} from './cross-thread-llm';
import { applyLinkOutcome, classifyOutcome } from './cross-thread-outcome';
import { tuningReport } from './cross-thread-tuning';
import { intentKeywords, jaccard } from './intent-keywords';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const OPENED = Date.UTC(2025, 10, 5, 10, 45, 0);

function opening(text: string, extra: Partial<CrossThreadOpening> = {}): CrossThreadOpening {
  return {
    threadId: 'thread-new',
    tenantId: 'acme',
    userId: 'user-xyz',
    openedAt: OPENED,
    text,
    ...extra,
  };
}

function thread(
  threadId: string,
  minutesAgo: number,
  extra: Partial<CrossThreadCandidate> = {},
): CrossThreadCandidate {
  return {
    threadId,
    tenantId: 'acme',
    userId: 'user-xyz',
    lastActivityAt: OPENED - minutesAgo * MINUTE,
    ...extra,
  };
}

// A coding-domain continuation: same symbol, same file, same bug, 20 minutes later.
const AUTH_THREAD = thread('thread-auth', 20, {
  summary: 'Fixing the TokenRefresher race in refresh.ts that logs users out',
  recentTurns: [
    'the TokenRefresher race in src/auth/refresh.ts logs users out',
    'add a mutex around the refresh call in refresh.ts',
  ],
});
const AUTH_FOLLOW_UP = 'the TokenRefresher race in refresh.ts logs users out again';

// Seed 004 §2.2–2.3: Thread 1 "Weather in New York", 40 minutes of silence, then Thread 2.
const WEATHER_THREAD = thread('thread-1', 40, {
  summary: 'User asking about weather in New York',
  recentTurns: ["What's the weather in New York?", 'What about next week?'],
});
const WEATHER_FOLLOW_UP = 'Oh, and what is it on Thursday?';

describe('scoreContinuity', () => {
  it('should weigh keyword, entity, topic and recency 0.3 / 0.3 / 0.2 / 0.2 and link above 0.7', () => {
    const [score] = scoreContinuity(opening(AUTH_FOLLOW_UP), [AUTH_THREAD]);
    const { keyword, entity, topic, recency } = score.components;
    expect(score.score).toBeCloseTo(0.3 * keyword + 0.3 * entity + 0.2 * topic + 0.2 * recency, 12);
    expect(entity).toBe(1);
    expect(topic).toBe(1);
    expect(recency).toBeCloseTo(1 - 20 / (24 * 60), 12);
    expect(keyword).toBe(
      jaccard(
        intentKeywords(AUTH_FOLLOW_UP),
        intentKeywords([AUTH_THREAD.summary, ...(AUTH_THREAD.recentTurns ?? [])].join('\n')),
      ),
    );
    expect(score).toMatchObject({
      threadId: 'thread-auth',
      topicMeasure: 'keyword-overlap',
      link: true,
    });
    expect(score.hoursSinceActivity).toBeCloseTo(1 / 3, 12);
    expect(score.score).toBeGreaterThan(0.7);
  });

  it("should leave the seed's weather follow-up below the threshold on keywords alone", () => {
    const [score] = scoreContinuity(opening(WEATHER_FOLLOW_UP), [WEATHER_THREAD]);
    expect(score.components).toEqual({
      keyword: 0,
      entity: 0,
      topic: 0,
      recency: 1 - 40 / (24 * 60),
    });
    expect(score.link).toBe(false);
  });

  it('should only score the same user’s other threads of the last 24 hours', () => {
    const scores = scoreContinuity(opening(AUTH_FOLLOW_UP), [
      thread('other-user', 5, { userId: 'someone-else' }),
      thread('other-tenant', 5, { tenantId: 'globex' }),
      thread('thread-new', 5),
      thread('too-old', 24 * 60 + 1),
      thread('after-opening', -1),
      thread('edge', 24 * 60),
    ]);
    expect(scores.map((score) => score.threadId)).toEqual(['edge']);
    expect(scores[0].components.recency).toBe(0);
  });

  it('should not link threads of an unknown user', () => {
    expect(scoreContinuity(opening(AUTH_FOLLOW_UP, { userId: null }), [AUTH_THREAD])).toEqual([]);
    expect(
      scoreContinuity(opening(AUTH_FOLLOW_UP, { userId: null }), [
        { ...AUTH_THREAD, userId: null },
      ]),
    ).toEqual([]);
  });

  it('should decay recency linearly over the window', () => {
    const [score] = scoreContinuity(opening('x'), [thread('half-day', 12 * 60)]);
    expect(score.components.recency).toBe(0.5);
    expect(
      scoreContinuity(opening('x'), [thread('recent', 0)], { windowMs: 2 * HOUR })[0].components
        .recency,
    ).toBe(1);
  });

  it('should use the cosine of embeddings for the topic when both threads have one', () => {
    const [score] = scoreContinuity(opening(WEATHER_FOLLOW_UP, { embedding: [0.6, 0.8] }), [
      { ...WEATHER_THREAD, embedding: [0.8, 0.6] },
    ]);
    expect(score.topicMeasure).toBe('cosine');
    expect(score.components.topic).toBeCloseTo(0.96, 12);
  });

  it('should measure the topic as the share of the new turn the old thread already covers', () => {
    const [score] = scoreContinuity(opening('flaky kafka consumer rebalance', { entities: [] }), [
      thread('kafka', 60, {
        keywords: ['flaki'],
        summary: 'kafka consumer rebalance storms',
        entities: [],
      }),
    ]);
    expect(score.components.topic).toBe(1);
    expect(score.components.keyword).toBeCloseTo(1 / 4, 12);
  });

  it('should compare entities case-insensitively and give 0 when neither side names one', () => {
    const [matched] = scoreContinuity(opening('x', { entities: ['TokenStore'] }), [
      thread('t', 5, { entities: ['tokenstore'], keywords: [] }),
    ]);
    expect(matched.components.entity).toBe(1);
    const [empty] = scoreContinuity(opening('plain words here'), [
      thread('t', 5, { summary: 'more plain words' }),
    ]);
    expect(empty.components.entity).toBe(0);
  });

  it('should sort best first, ties to the more recently active thread, then the smaller id', () => {
    const scores = scoreContinuity(opening('x', { keywords: [], entities: [] }), [
      thread('b', 30, { keywords: [], entities: [] }),
      thread('a', 30, { keywords: [], entities: [] }),
      thread('newest', 10, { keywords: [], entities: [] }),
      thread('oldest', 90, { keywords: [], entities: [] }),
    ]);
    expect(scores.map((score) => score.threadId)).toEqual(['newest', 'a', 'b', 'oldest']);
  });

  it('should honour configured weights and threshold', () => {
    const [score] = scoreContinuity(opening('x'), [thread('now', 0)], {
      weights: { keyword: 0, entity: 0, topic: 0, recency: 1 },
      threshold: 0.99,
    });
    expect(score).toMatchObject({ score: 1, link: true });
  });
});

describe('combineDecisions', () => {
  const assessment = (related: boolean, confidence: number): LlmContinuityAssessment => ({
    related,
    confidence,
    reasoning: 'because',
    keySignals: ['signal'],
  });

  it('should link with high confidence when both agree (seed 004: 0.88 and 0.92)', () => {
    const combined = combineDecisions({ score: 0.88, threshold: 0.7 }, assessment(true, 0.92));
    expect(combined).toEqual({
      decision: 'LINK',
      uncertain: false,
      decidedBy: 'agreement',
      agreement: true,
      algorithmic: {
        score: 0.88,
        threshold: 0.7,
        link: true,
        confidence: algorithmicConfidence(0.88, 0.7),
      },
      llm: assessment(true, 0.92),
    });
    expect(combined.algorithmic.confidence).toBeCloseTo(0.6, 12);
  });

  it('should not link when both say unrelated', () => {
    expect(combineDecisions({ score: 0.4, threshold: 0.7 }, assessment(false, 0.8))).toMatchObject({
      decision: 'NO_LINK',
      uncertain: false,
      decidedBy: 'agreement',
      agreement: true,
    });
  });

  it('should use the algorithmic verdict alone without an LLM, linking strictly above the threshold', () => {
    expect(combineDecisions({ score: 0.75, threshold: 0.7 }, null)).toMatchObject({
      decision: 'LINK',
      uncertain: false,
      decidedBy: 'algorithmic',
      agreement: null,
      llm: null,
    });
    expect(combineDecisions({ score: 0.7, threshold: 0.7 }, null).decision).toBe('NO_LINK');
  });

  it('should follow a more confident LLM when they disagree, and mark it UNCERTAIN', () => {
    expect(combineDecisions({ score: 0.19, threshold: 0.7 }, assessment(true, 0.92))).toMatchObject(
      {
        decision: 'LINK',
        uncertain: true,
        decidedBy: 'llm',
        agreement: false,
      },
    );
    expect(combineDecisions({ score: 0.72, threshold: 0.7 }, assessment(false, 0.6))).toMatchObject(
      {
        decision: 'NO_LINK',
        uncertain: true,
        decidedBy: 'llm',
      },
    );
  });

  it('should follow a more confident algorithm when they disagree, and mark it UNCERTAIN', () => {
    expect(combineDecisions({ score: 0.95, threshold: 0.7 }, assessment(false, 0.6))).toMatchObject(
      {
        decision: 'LINK',
        uncertain: true,
        decidedBy: 'algorithmic',
      },
    );
    expect(combineDecisions({ score: 0.1, threshold: 0.7 }, assessment(true, 0.8))).toMatchObject({
      decision: 'NO_LINK',
      uncertain: true,
      decidedBy: 'algorithmic',
    });
  });

  it('should not link on an exact confidence tie', () => {
    expect(combineDecisions({ score: 0.85, threshold: 0.7 }, assessment(false, 0.5))).toMatchObject(
      {
        decision: 'NO_LINK',
        uncertain: true,
        decidedBy: 'llm',
      },
    );
    expect(combineDecisions({ score: 0.35, threshold: 0.7 }, assessment(true, 0.5))).toMatchObject({
      decision: 'NO_LINK',
      uncertain: true,
      decidedBy: 'algorithmic',
    });
  });

  it('should clamp an out-of-range LLM confidence', () => {
    expect(
      combineDecisions({ score: 0.1, threshold: 0.7 }, assessment(true, 7)).llm?.confidence,
    ).toBe(1);
  });
});

describe('algorithmicConfidence', () => {
  it('should be the distance from the threshold scaled to the room on that side', () => {
    expect(algorithmicConfidence(0.7, 0.7)).toBe(0);
    expect(algorithmicConfidence(1, 0.7)).toBe(1);
    expect(algorithmicConfidence(0, 0.7)).toBe(1);
    expect(algorithmicConfidence(0.85, 0.7)).toBeCloseTo(0.5, 12);
    expect(algorithmicConfidence(0.35, 0.7)).toBeCloseTo(0.5, 12);
  });
});

describe('decideCrossThreadLink', () => {
  const agreeing: LlmContinuityAssessor = {
    assess: () =>
      Promise.resolve({
        related: true,
        confidence: 0.9,
        reasoning: 'same bug',
        keySignals: ['TokenRefresher'],
      }),
  };

  it('should decide nothing, and not ask the LLM, without an eligible earlier thread', async () => {
    const assess = vi.fn(agreeing.assess);
    const result = await decideCrossThreadLink(
      { opening: opening(AUTH_FOLLOW_UP), candidates: [thread('other', 5, { userId: 'x' })] },
      { assess },
    );
    expect(result).toEqual({ record: null, scores: [] });
    expect(assess).not.toHaveBeenCalled();
  });

  it('should decide on the algorithm alone without an LLM and record everything', async () => {
    const result = await decideCrossThreadLink({
      opening: opening(AUTH_FOLLOW_UP),
      candidates: [WEATHER_THREAD, AUTH_THREAD],
    });
    const best = result.scores[0];
    expect(result.scores.map((score) => score.threadId)).toEqual(['thread-auth', 'thread-1']);
    expect(result.record).toEqual({
      decisionId: 'thread-new->thread-auth',
      tenantId: 'acme',
      userId: 'user-xyz',
      newThreadId: 'thread-new',
      candidateThreadId: 'thread-auth',
      decidedAt: OPENED,
      algorithmic: {
        score: best.score,
        threshold: 0.7,
        link: true,
        confidence: algorithmicConfidence(best.score, 0.7),
        components: best.components,
        topicMeasure: 'keyword-overlap',
        weights: { keyword: 0.3, entity: 0.3, topic: 0.2, recency: 0.2 },
        hoursSinceActivity: best.hoursSinceActivity,
      },
      llm: null,
      llmStatus: 'not_configured',
      llmError: null,
      agreement: null,
      decision: 'LINK',
      uncertain: false,
      decidedBy: 'algorithmic',
      outcome: null,
      outcomeAt: null,
    });
    expect(JSON.parse(JSON.stringify(result.record))).toEqual(result.record);
  });

  it('should ask the LLM about the best thread with its summary, last turns and the new message', async () => {
    const assess = vi.fn(agreeing.assess);
    const turns = ['one', 'two', 'three', 'four'];
    const result = await decideCrossThreadLink(
      {
        opening: opening(AUTH_FOLLOW_UP),
        candidates: [
          { ...AUTH_THREAD, recentTurns: turns, keywords: intentKeywords(AUTH_FOLLOW_UP) },
        ],
        now: OPENED + 5,
      },
      { assess },
      { llmMaxTurns: 2 },
    );
    const [input] = assess.mock.calls[0] as [ContinuityAssessmentInput, AbortSignal | undefined];
    expect(input).toEqual({
      currentThreadId: 'thread-new',
      previousThreadId: 'thread-auth',
      previousSummary: AUTH_THREAD.summary,
      previousTurns: ['three', 'four'],
      currentMessage: AUTH_FOLLOW_UP,
      hoursSincePreviousActivity: 20 / 60,
    });
    expect(result.record).toMatchObject({
      decidedAt: OPENED + 5,
      llmStatus: 'ok',
      agreement: true,
      decision: 'LINK',
      uncertain: false,
      llm: {
        related: true,
        confidence: 0.9,
        reasoning: 'same bug',
        keySignals: ['TokenRefresher'],
      },
    });
  });

  it("should link the seed's weather follow-up as UNCERTAIN when a confident LLM sees the connection", async () => {
    const result = await decideCrossThreadLink(
      { opening: opening(WEATHER_FOLLOW_UP), candidates: [WEATHER_THREAD] },
      {
        assess: () =>
          Promise.resolve({
            related: true,
            confidence: 0.92,
            reasoning: 'Thursday continues the weather question',
            keySignals: ['weather', 'follow-up phrasing'],
          }),
      },
    );
    expect(result.record).toMatchObject({
      decision: 'LINK',
      uncertain: true,
      decidedBy: 'llm',
      agreement: false,
      algorithmic: { link: false },
    });
  });

  it('should count a timed-out LLM as absent, record it and abort its signal', async () => {
    let signal: AbortSignal | undefined;
    const result = await decideCrossThreadLink(
      { opening: opening(AUTH_FOLLOW_UP), candidates: [AUTH_THREAD] },
      {
        assess: (_input, abort) => {
          signal = abort;
          return new Promise<LlmContinuityAssessment>(() => undefined);
        },
      },
      { llmTimeoutMs: 10 },
    );
    expect(result.record).toMatchObject({
      llm: null,
      llmStatus: 'timeout',
      llmError: 'no answer within 10 ms',
      decision: 'LINK',
      decidedBy: 'algorithmic',
      uncertain: false,
      agreement: null,
    });
    expect(signal?.aborted).toBe(true);
  });

  it('should wait for the LLM as long as it takes with an infinite timeout', async () => {
    const result = await decideCrossThreadLink(
      { opening: opening(AUTH_FOLLOW_UP), candidates: [AUTH_THREAD] },
      {
        assess: () =>
          new Promise<LlmContinuityAssessment>((resolve) =>
            setTimeout(
              () => resolve({ related: false, confidence: 0.99, reasoning: '', keySignals: [] }),
              20,
            ),
          ),
      },
      { llmTimeoutMs: Infinity },
    );
    expect(result.record).toMatchObject({ llmStatus: 'ok', uncertain: true, decidedBy: 'llm' });
  });

  it('should not leak a rejection that arrives after the timeout', async () => {
    const result = await decideCrossThreadLink(
      { opening: opening(AUTH_FOLLOW_UP), candidates: [AUTH_THREAD] },
      {
        assess: () =>
          new Promise<LlmContinuityAssessment>((_resolve, reject) =>
            setTimeout(() => reject(new Error('late')), 30),
          ),
      },
      { llmTimeoutMs: 5 },
    );
    expect(result.record?.llmStatus).toBe('timeout');
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it('should count a failing LLM as absent and record the error, thrown or rejected', async () => {
    const rejected = await decideCrossThreadLink(
      { opening: opening(AUTH_FOLLOW_UP), candidates: [AUTH_THREAD] },
      { assess: () => Promise.reject(new Error('429 rate limited')) },
    );
    expect(rejected.record).toMatchObject({
      llm: null,
      llmStatus: 'error',
      llmError: 'Error: 429 rate limited',
      decidedBy: 'algorithmic',
    });
    const thrown = await decideCrossThreadLink(
      { opening: opening(AUTH_FOLLOW_UP), candidates: [AUTH_THREAD] },
      {
        assess: () => {
          throw new TypeError('boom');
        },
      },
    );
    expect(thrown.record).toMatchObject({ llmStatus: 'error', llmError: 'TypeError: boom' });
  });

  it('should count a malformed LLM answer as absent', async () => {
    const result = await decideCrossThreadLink(
      { opening: opening(AUTH_FOLLOW_UP), candidates: [AUTH_THREAD] },
      {
        assess: () =>
          Promise.resolve({
            related: 'yes',
            confidence: 0.9,
          } as unknown as LlmContinuityAssessment),
      },
    );
    expect(result.record).toMatchObject({
      llm: null,
      llmStatus: 'invalid',
      llmError: 'related is not a boolean',
    });
  });

  it('should give the same record for the same input', async () => {
    const input = { opening: opening(AUTH_FOLLOW_UP), candidates: [WEATHER_THREAD, AUTH_THREAD] };
    const first = await decideCrossThreadLink(input, agreeing);
    const second = await decideCrossThreadLink(
      { ...input, candidates: [AUTH_THREAD, WEATHER_THREAD] },
      agreeing,
    );
    expect(second).toEqual(first);
  });
});

describe('classifyOutcome', () => {
  it('should mark a link INCORRECT when the user says it was wrong (seed 004)', () => {
    expect(classifyOutcome("That's not what I meant", 'LINK')).toBe('INCORRECT');
    expect(classifyOutcome("no, that's unrelated, I need the billing export", 'LINK')).toBe(
      'INCORRECT',
    );
    expect(classifyOutcome('wrong context, this is about the CLI', 'LINK')).toBe('INCORRECT');
    expect(classifyOutcome('forget that, new question about docker', 'LINK')).toBe('INCORRECT');
  });

  it('should mark a link CORRECT when the user builds on the linked context', () => {
    expect(classifyOutcome('like we discussed, add the retry to it', 'LINK')).toBe('CORRECT');
    expect(classifyOutcome('now add a unit test for the mutex path', 'LINK')).toBe('CORRECT');
  });

  it('should judge a link by topic when the linked context is known', () => {
    const context = { contextKeywords: intentKeywords('TokenRefresher race refresh mutex logout') };
    expect(classifyOutcome('add a test for the refresh mutex please', 'LINK', context)).toBe(
      'CORRECT',
    );
    expect(
      classifyOutcome('set up the grafana dashboard for billing exports', 'LINK', context),
    ).toBe('INCORRECT');
  });

  it('should mark a non-link INCORRECT when the user refers back (a missed link)', () => {
    expect(classifyOutcome("didn't we talk about this?", 'NO_LINK')).toBe('INCORRECT');
    expect(classifyOutcome('didn\u2019t we already discuss this yesterday?', 'NO_LINK')).toBe(
      'INCORRECT',
    );
    expect(classifyOutcome('like we discussed, use the same approach', 'NO_LINK')).toBe(
      'INCORRECT',
    );
    expect(classifyOutcome('same as before', 'NO_LINK')).toBe('INCORRECT');
  });

  it('should mark a non-link CORRECT when the user starts fresh or continues a new topic', () => {
    expect(classifyOutcome('set up the grafana dashboard for billing exports', 'NO_LINK')).toBe(
      'CORRECT',
    );
  });

  it('should not count a non-link follow-up that resumes the other thread’s topic silently', () => {
    const context = { contextKeywords: intentKeywords('grafana dashboard billing exports') };
    expect(
      classifyOutcome('set up the grafana dashboard for billing exports', 'NO_LINK', context),
    ).toBeNull();
  });

  it('should treat terse or empty follow-ups as no evidence', () => {
    for (const decision of ['LINK', 'NO_LINK'] as const) {
      expect(classifyOutcome('ok push', decision)).toBeNull();
      expect(classifyOutcome('5,6', decision)).toBeNull();
      expect(classifyOutcome('   ', decision)).toBeNull();
    }
  });
});

function record(
  id: string,
  score: number,
  decision: 'LINK' | 'NO_LINK',
  outcome: 'CORRECT' | 'INCORRECT' | null,
  extra: Partial<LinkDecisionRecord> = {},
): LinkDecisionRecord {
  const link = score > 0.7;
  return {
    decisionId: id,
    tenantId: 'acme',
    userId: 'u',
    newThreadId: `${id}-new`,
    candidateThreadId: `${id}-old`,
    decidedAt: OPENED,
    algorithmic: {
      score,
      threshold: 0.7,
      link,
      confidence: algorithmicConfidence(score, 0.7),
      components: { keyword: 0, entity: 0, topic: 0, recency: 0 },
      topicMeasure: 'keyword-overlap',
      weights: { keyword: 0.3, entity: 0.3, topic: 0.2, recency: 0.2 },
      hoursSinceActivity: 1,
    },
    llm: null,
    llmStatus: 'not_configured',
    llmError: null,
    agreement: null,
    decision,
    uncertain: false,
    decidedBy: 'algorithmic',
    outcome,
    outcomeAt: outcome === null ? null : OPENED + HOUR,
    ...extra,
  };
}

describe('applyLinkOutcome', () => {
  it('should record the first definitive outcome only', () => {
    const open = record('r', 0.8, 'LINK', null);
    const judged = applyLinkOutcome(open, 'INCORRECT', OPENED + 1);
    expect(judged).toMatchObject({ outcome: 'INCORRECT', outcomeAt: OPENED + 1 });
    expect(open.outcome).toBeNull();
    expect(applyLinkOutcome(judged, 'CORRECT', OPENED + 2)).toBe(judged);
    expect(applyLinkOutcome(open, null, OPENED + 3)).toBe(open);
  });
});

describe('tuningReport', () => {
  const overruled = {
    llm: { related: true, confidence: 0.9, reasoning: '', keySignals: [] },
    llmStatus: 'ok' as const,
    agreement: false,
    uncertain: true,
    decidedBy: 'llm' as const,
  };
  const records = [
    record('r1', 0.9, 'LINK', 'CORRECT'),
    record('r2', 0.8, 'LINK', 'CORRECT'),
    record('r3', 0.72, 'LINK', 'INCORRECT'),
    record('r4', 0.75, 'LINK', 'INCORRECT'),
    record('r5', 0.5, 'NO_LINK', 'CORRECT'),
    record('r6', 0.6, 'NO_LINK', 'INCORRECT'),
    record('r7', 0.3, 'NO_LINK', 'CORRECT'),
    record('r8', 0.95, 'LINK', null),
    record('r9', 0.65, 'LINK', 'CORRECT', overruled),
  ];

  it('should report rates at the current threshold and propose the least-error threshold', () => {
    expect(tuningReport(records)).toEqual({
      decisions: 9,
      withOutcome: 8,
      related: 4,
      unrelated: 4,
      currentThreshold: 0.7,
      proposedThreshold: 0.75,
      current: {
        truePositives: 2,
        falsePositives: 2,
        trueNegatives: 2,
        falseNegatives: 2,
        falsePositiveRate: 0.5,
        falseNegativeRate: 0.5,
        accuracy: 0.5,
      },
      proposed: {
        truePositives: 2,
        falsePositives: 0,
        trueNegatives: 4,
        falseNegatives: 2,
        falsePositiveRate: 0,
        falseNegativeRate: 0.5,
        accuracy: 0.75,
      },
      finalDecisions: {
        truePositives: 3,
        falsePositives: 2,
        trueNegatives: 2,
        falseNegatives: 1,
        falsePositiveRate: 0.5,
        falseNegativeRate: 0.25,
        accuracy: 0.625,
      },
      disagreements: { total: 1, algorithmicCorrect: 0, llmCorrect: 1 },
      enoughData: false,
    });
  });

  it('should weigh errors by their configured cost', () => {
    expect(tuningReport(records, { falseNegativeCost: 3 }).proposedThreshold).toBe(0.59);
  });

  it('should keep the current threshold when it is already optimal', () => {
    const report = tuningReport([
      record('a', 0.9, 'LINK', 'CORRECT'),
      record('b', 0.2, 'NO_LINK', 'CORRECT'),
    ]);
    expect(report.proposedThreshold).toBe(0.7);
    expect(report.current.accuracy).toBe(1);
  });

  it('should take the current threshold from the latest record unless told', () => {
    const older = record('old', 0.9, 'LINK', null);
    const newer = record('new', 0.9, 'LINK', null, {
      decidedAt: OPENED + HOUR,
      algorithmic: { ...older.algorithmic, threshold: 0.72 },
    });
    expect(tuningReport([newer, older]).currentThreshold).toBe(0.72);
    expect(tuningReport([newer, older], { currentThreshold: 0.8 }).currentThreshold).toBe(0.8);
  });

  it('should report no rates and keep the threshold without outcomes', () => {
    const report = tuningReport([]);
    expect(report).toMatchObject({
      decisions: 0,
      withOutcome: 0,
      currentThreshold: 0.7,
      proposedThreshold: 0.7,
      enoughData: false,
    });
    expect(report.current).toEqual({
      truePositives: 0,
      falsePositives: 0,
      trueNegatives: 0,
      falseNegatives: 0,
      falsePositiveRate: null,
      falseNegativeRate: null,
      accuracy: null,
    });
  });

  it('should say when there are enough outcomes', () => {
    expect(tuningReport(records, { minOutcomes: 8 }).enoughData).toBe(true);
  });
});

describe('decideCrossThreadLinkAlgorithmically', () => {
  it('should decide exactly as decideCrossThreadLink does without an assessor', async () => {
    for (const text of [AUTH_FOLLOW_UP, "what's the weather in New York"]) {
      const input = { opening: opening(text), candidates: [AUTH_THREAD, WEATHER_THREAD] };
      const sync = decideCrossThreadLinkAlgorithmically(input);
      expect(sync).toEqual(await decideCrossThreadLink(input, null));
      expect(sync.record?.llmStatus).toBe('not_configured');
    }
    expect(decideCrossThreadLinkAlgorithmically({ opening: opening('x'), candidates: [] })).toEqual(
      {
        record: null,
        scores: [],
      },
    );
  });
});
