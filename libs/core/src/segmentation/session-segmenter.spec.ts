import { describe, expect, it } from 'vitest';
import { v5 as uuidv5 } from 'uuid';
import { InvalidEventError } from '../errors/engram-error';
import { ENGRAM_ID_NAMESPACE } from '../ids/deterministic-id';
import { gapAdjustedThreshold, segmenterSettings } from './segmenter-settings';
import {
  closeIdle,
  endSession,
  episodeIdOf,
  segmentPrompt,
  type PromptDecision,
  type SegmenterOutput,
  type SegmenterPrompt,
  type SessionState,
  type StepContext,
} from './session-segmenter';

const T0 = Date.UTC(2026, 1, 18, 9, 0, 0);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

interface Turn {
  text: string;
  /** Seconds after the previous prompt. */
  gap?: number;
  source?: SegmenterPrompt['source'];
  channel?: string;
  channelKind?: SegmenterPrompt['channelKind'];
  thread?: string | null;
  parent?: string | null;
}

/** Runs a session's prompts through the segmenter; returns each prompt's decision and all outputs. */
function run(turns: Turn[], context: StepContext = { settings: segmenterSettings() }) {
  let state: SessionState | undefined;
  let at = T0;
  const decisions: PromptDecision[] = [];
  const outputs: SegmenterOutput[] = [];
  turns.forEach((turn, index) => {
    at += (turn.gap ?? 30) * SECOND;
    const result = segmentPrompt(state, prompt(index + 1, at, turn), context);
    state = result.state;
    decisions.push(result.decision);
    outputs.push(...result.outputs);
  });
  return { state: state!, decisions, outputs, at };
}

function prompt(promptId: number, timestamp: number, turn: Turn): SegmenterPrompt {
  return {
    eventId: `event-${promptId}`,
    tenantId: 'acme',
    projectId: 'acme/api',
    sessionId: 'session-1',
    agentId: 'claude-code',
    userId: 'dev-1',
    timestamp,
    promptId,
    source: turn.source ?? 'user',
    channel: turn.channel ?? 'cli',
    channelKind: turn.channelKind ?? 'explicit',
    explicitThreadId: turn.thread === undefined ? 'thread-1' : turn.thread,
    text: turn.text,
    parentEpisodeId: turn.parent ?? null,
  };
}

const boundaries = (decisions: PromptDecision[]) => decisions.map((d) => d.boundary);

describe('segmentPrompt — seed 000 boundary rules', () => {
  it("should keep the seed's three refinement prompts in one episode", () => {
    const { decisions } = run([
      { text: 'please add the cargo test failures to the workspace claude.md' },
      { text: 'we should exclude the ../library', gap: 47 },
      { text: 'what is the histogram (monotonic) for all 3 signals', gap: 117 },
    ]);
    expect(boundaries(decisions)).toEqual([true, false, false]);
    expect(decisions.slice(1).map((d) => d.rule)).toEqual(['low_signal', 'low_signal']);
  });

  it('should open a new episode at "ok push" → "so what signals are we trying to detect again…"', () => {
    const { decisions } = run([
      {
        text: 'refactor the retry loop in the kafka consumer so that backoff doubles each attempt',
      },
      { text: 'ok push', gap: 40 },
      {
        text: 'so what signals are we trying to detect again, this list will probably grow',
        gap: 74,
      },
    ]);
    expect(boundaries(decisions)).toEqual([true, false, true]);
    expect(decisions[1].rule).toBe('terse');
    expect(decisions[2]).toMatchObject({
      reason: 'intent_shift',
      rule: 'intent_shift',
      similarity: 0,
    });
    expect(decisions[2].threshold).toBe(0.3);
  });

  it('should treat the terse "5,6" as a continuation, and the prompt after it on its merits', () => {
    const { decisions } = run([
      { text: 'list the options for extracting tool responses from the s1_extractor failures' },
      { text: '5,6', gap: 20 },
      { text: 'i want the s1_extractor to get tool responses when it is a fail', gap: 35 },
    ]);
    expect(boundaries(decisions)).toEqual([true, false, false]);
    expect(decisions[1].rule).toBe('terse');
    expect(decisions[2].rule).toBe('similar');
    expect(decisions[2].similarity).toBeGreaterThanOrEqual(0.3);
  });

  it('should split "fix the auth bug" from an unrelated longer intent, but not a terse reply', () => {
    const { decisions } = run([
      { text: 'fix the token refresh bug in src/auth/refresh.ts where logout races refresh' },
      { text: 'yes', gap: 10 },
      {
        text: 'now upgrade the elasticsearch client and regenerate the index templates for search',
        gap: 60,
      },
    ]);
    expect(boundaries(decisions)).toEqual([true, false, true]);
  });

  it('should grow the episode bag with each continuing prompt', () => {
    const { state } = run([
      { text: 'add retry with exponential backoff to the kafka consumer loop' },
      { text: 'the kafka consumer retry should also cap the backoff at thirty seconds', gap: 50 },
    ]);
    expect(state.episode!.bag).toEqual(
      expect.arrayContaining(['kafka', 'consum', 'retri', 'cap', 'thirti']),
    );
    expect(state.episode!.userPromptCount).toBe(2);
  });

  it('should publish snapshots that later prompts do not change', () => {
    const { outputs, state } = run([
      { text: 'add retry with exponential backoff to the kafka consumer loop' },
      { text: 'the kafka consumer retry should also cap the backoff at thirty seconds', gap: 50 },
      { text: 'ok push', gap: 20 },
      { text: 'profile the recall latency of the retrieval service under fifty queries', gap: 40 },
      { text: 'the recall latency of the retrieval service is dominated by knn search', gap: 40 },
    ]);
    const [opened, closed, reopened] = outputs;
    // The opened snapshot is the episode at its first prompt, not the episode it grew into.
    expect(opened.kind).toBe('opened');
    expect(opened.episode.sourceEventIds).toEqual(['event-1']);
    expect(opened.episode.userPromptCount).toBe(1);
    expect(opened.episode.intentKeywords).not.toContain('thirti');
    expect(opened.episode.intent).toBe(
      'add retry with exponential backoff to the kafka consumer loop',
    );
    // The closed one is the episode as it closed.
    expect(closed.kind).toBe('closed');
    expect(closed.episode.sourceEventIds).toEqual(['event-1', 'event-2', 'event-3']);
    expect(closed.episode.intentKeywords).toContain('thirti');
    expect(closed.episode.userPromptCount).toBe(3);
    expect(reopened.kind).toBe('opened');
    expect(reopened.episode.sourceEventIds).toEqual(['event-4']);
    expect(state.episode!.sourceEventIds).toEqual(['event-4', 'event-5']);
    expect(state.episode!.bag).toEqual(expect.arrayContaining(reopened.episode.intentKeywords));
    expect(state.episode!.bag.length).toBeGreaterThan(reopened.episode.intentKeywords.length);
  });

  it('should evaluate a terse prompt after a gap longer than the thread timeout', () => {
    const { decisions } = run([
      { text: 'add retry with exponential backoff to the kafka consumer loop' },
      { text: 'ok push', gap: 3 * 3600 },
    ]);
    expect(decisions[1]).toMatchObject({
      boundary: true,
      reason: 'intent_shift',
      rule: 'intent_shift',
    });
    expect(decisions[1].threshold).toBeCloseTo(0.3 + 0.3 * (Math.log2(6) / 4), 10);
  });

  it('should raise the threshold with the gap, reaching base + 0.3 at eight hours', () => {
    const settings = segmenterSettings();
    const timeout = 30 * MINUTE;
    expect(gapAdjustedThreshold(0.3, 20 * MINUTE, timeout, settings)).toBe(0.3);
    expect(gapAdjustedThreshold(0.3, HOUR, timeout, settings)).toBeCloseTo(0.375, 10);
    expect(gapAdjustedThreshold(0.3, 2 * HOUR, timeout, settings)).toBeCloseTo(0.45, 10);
    expect(gapAdjustedThreshold(0.3, 8 * HOUR, timeout, settings)).toBeCloseTo(0.6, 10);
    expect(gapAdjustedThreshold(0.3, 48 * HOUR, timeout, settings)).toBeCloseTo(0.6, 10);
  });

  it('should never let agent or system prompts move a boundary', () => {
    const { decisions, state } = run([
      { text: 'add retry with exponential backoff to the kafka consumer loop' },
      {
        text: 'I will now rewrite the entire elasticsearch index mapping templates',
        source: 'agent',
      },
      { text: 'system: compaction of the transcript happened after forty turns', source: 'system' },
    ]);
    expect(boundaries(decisions)).toEqual([true, false, false]);
    expect(decisions.slice(1).map((d) => d.rule)).toEqual(['not_user', 'not_user']);
    expect(state.episode!.lastPromptId).toBe(3);
    expect(state.episode!.userPromptCount).toBe(1);
  });

  it('should keep a one-prompt session as one episode, id = uuid v5 of session + first prompt', () => {
    const { decisions, outputs, state } = run([
      { text: 'migrate the billing service to the new payments api' },
    ]);
    expect(decisions[0]).toMatchObject({
      boundary: true,
      episodeId: episodeIdOf('session-1', 1),
      rule: 'first',
    });
    expect(episodeIdOf('session-1', 1)).toBe(uuidv5('session-1:1', ENGRAM_ID_NAMESPACE));
    expect(outputs.map((o) => o.kind)).toEqual(['opened']);
    const end = endSession(state, T0 + HOUR);
    expect(end.outputs).toMatchObject([{ kind: 'closed', reason: 'session_end' }]);
    expect(end.state.episode).toBeNull();
  });

  it('should close an episode after 50 user prompts (size_limit)', () => {
    const turns: Turn[] = Array.from({ length: 51 }, () => ({ text: 'ok', gap: 5 }));
    const { decisions, outputs } = run(turns);
    expect(decisions[50]).toMatchObject({ boundary: true, reason: 'size_limit' });
    expect(outputs.filter((o) => o.kind === 'closed')).toMatchObject([
      {
        reason: 'size_limit',
        episode: { firstPromptId: 1, lastPromptId: 50, userPromptCount: 50 },
      },
    ]);
  });

  it('should close an episode that lasted 24 hours (time_limit)', () => {
    // 29.5-minute gaps never exceed the thread timeout, so only the 24-hour limit can close it.
    const turns: Turn[] = [
      { text: 'investigate the flaky integration tests in the payments module' },
    ];
    for (let i = 0; i < 49; i += 1) turns.push({ text: 'ok', gap: 29.5 * 60 });
    const { decisions } = run(turns);
    expect(decisions.findIndex((d) => d.boundary && d.promptId > 1)).toBe(49);
    expect(decisions[49]).toMatchObject({ boundary: true, reason: 'time_limit', rule: 'limit' });
  });

  it('should be deterministic: the same input gives the same decisions and outputs', () => {
    const turns: Turn[] = [
      { text: 'add retry with exponential backoff to the kafka consumer loop' },
      { text: 'now document the neo4j schema constraints in the architecture notes', gap: 90 },
    ];
    expect(run(turns)).toEqual(run(turns));
  });
});

describe('segmentPrompt — threads (seed 004 §1)', () => {
  it('should open a new implicit thread after the inactivity timeout, closing the episode', () => {
    const { decisions, outputs } = run([
      {
        text: 'add retry with exponential backoff to the kafka consumer loop',
        channelKind: 'implicit',
        thread: null,
      },
      { text: 'ok', gap: 31 * 60, channelKind: 'implicit', thread: null },
    ]);
    expect(decisions[1]).toMatchObject({
      boundary: true,
      reason: 'thread_inactivity',
      rule: 'thread',
    });
    expect(decisions[1].threadId).not.toBe(decisions[0].threadId);
    expect(outputs.find((o) => o.kind === 'closed')).toMatchObject({ reason: 'thread_inactivity' });
  });

  it('should honour per-channel and per-tenant timeouts', () => {
    const settings = segmenterSettings({
      inactivityTimeoutByChannel: { sms: 240 },
      inactivityTimeoutByTenant: { acme: 10 },
    });
    const sms = run(
      [
        {
          text: 'add retry with exponential backoff to the kafka consumer loop',
          channel: 'sms',
          channelKind: 'implicit',
          thread: null,
        },
        { text: 'ok', gap: 3 * 3600, channel: 'sms', channelKind: 'implicit', thread: null },
      ],
      { settings },
    );
    expect(sms.decisions[1].boundary).toBe(false);
    const cli = run(
      [
        {
          text: 'add retry with exponential backoff to the kafka consumer loop',
          channelKind: 'implicit',
          thread: null,
        },
        { text: 'ok', gap: 11 * 60, channelKind: 'implicit', thread: null },
      ],
      { settings },
    );
    expect(cli.decisions[1]).toMatchObject({ boundary: true, reason: 'thread_inactivity' });
  });

  it('should follow explicitThreadId on explicit channels, with no inactivity timeout', () => {
    const { decisions } = run([
      { text: 'add retry with exponential backoff to the kafka consumer loop', thread: 'T-1' },
      {
        text: 'add retry with exponential backoff to the kafka consumer loop tests',
        gap: 5 * 3600,
        thread: 'T-1',
      },
      { text: 'ok', gap: 10, thread: 'T-2' },
    ]);
    // Five hours later the thread is still T-1; the long gap only raised the threshold.
    expect(decisions[1]).toMatchObject({ boundary: false, threadId: 'T-1', rule: 'similar' });
    expect(decisions[1].threshold).toBeGreaterThan(0.3);
    expect(decisions[2]).toMatchObject({
      boundary: true,
      reason: 'explicit_thread',
      threadId: 'T-2',
    });
  });

  it('should close idle implicit threads by timer, without waiting for the next prompt', () => {
    const settings = segmenterSettings();
    const { state, at } = run([
      {
        text: 'add retry with exponential backoff to the kafka consumer loop',
        channelKind: 'implicit',
        thread: null,
      },
    ]);
    expect(closeIdle(state, at + 29 * MINUTE, settings).outputs).toEqual([]);
    const idle = closeIdle(state, at + 31 * MINUTE, settings);
    expect(idle.outputs).toMatchObject([{ kind: 'closed', reason: 'thread_inactivity', at }]);
    expect(idle.state.episode).toBeNull();
  });

  it('should give the same outputs whether or not the timer ran before the next prompt', () => {
    const settings = segmenterSettings();
    const opening = 'add retry with exponential backoff to the kafka consumer loop';
    const later = 'document the retry settings of the kafka consumer in the operations guide';
    for (const [gap, kind] of [
      [40 * MINUTE, 'implicit'],
      [29 * MINUTE, 'explicit'],
    ] as const) {
      const first = () =>
        run([{ text: opening, channelKind: kind, thread: kind === 'explicit' ? 'T' : null }]);
      const next = (at: number) =>
        prompt(2, at + gap, {
          text: later,
          channelKind: kind,
          thread: kind === 'explicit' ? 'T' : null,
        });
      const plain = first();
      const plainStep = segmentPrompt(plain.state, next(plain.at), { settings });
      const timed = first();
      const swept = closeIdle(timed.state, timed.at + gap - 1, settings);
      const timedStep = segmentPrompt(swept.state, next(timed.at), { settings });
      expect(timedStep.decision).toEqual(plainStep.decision);
      expect([...swept.outputs, ...timedStep.outputs]).toEqual(plainStep.outputs);
    }
  });
});

describe('segmentPrompt — bad and repeated input', () => {
  it('should change nothing for a duplicate eventId', () => {
    const settings = segmenterSettings();
    const first = run([{ text: 'add retry with exponential backoff to the kafka consumer loop' }]);
    const before = structuredClone(first.state);
    const again = segmentPrompt(
      first.state,
      prompt(1, first.at, {
        text: 'add retry with exponential backoff to the kafka consumer loop',
      }),
      { settings },
    );
    expect(again.decision.rule).toBe('duplicate');
    expect(again.outputs).toEqual([]);
    expect(again.state).toEqual(before);
  });

  it('should refuse an out-of-order promptId and an oversize text without touching the state', () => {
    const settings = segmenterSettings({ maxPromptChars: 100 });
    const { state, at } = run(
      [{ text: 'first prompt of the session about kafka retries' }, { text: 'ok' }],
      { settings },
    );
    const before = structuredClone(state);
    const late = { ...prompt(1, at, { text: 'late' }), eventId: 'other' };
    expect(() => segmentPrompt(state, late, { settings })).toThrow(InvalidEventError);
    expect(() =>
      segmentPrompt(state, prompt(3, at, { text: 'x'.repeat(101) }), { settings }),
    ).toThrow(/over the limit of 100/);
    expect(state).toEqual(before);
  });
});

describe('segmentPrompt — chaining hook', () => {
  it('should take an explicit parent over the finder, and the finder otherwise', () => {
    const settings = segmenterSettings();
    const findParent = () => 'found-parent';
    const explicit = run(
      [{ text: 'continue the payments migration from yesterday evening', parent: 'named' }],
      { settings, findParent },
    );
    expect(explicit.outputs[0]).toMatchObject({
      kind: 'opened',
      episode: { parentEpisodeId: 'named' },
    });
    const found = run([{ text: 'continue the payments migration from yesterday evening' }], {
      settings,
      findParent,
    });
    expect(found.outputs[0]).toMatchObject({
      kind: 'opened',
      episode: { parentEpisodeId: 'found-parent' },
    });
  });
});
