import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { debuggingSession, SessionBuilder } from './testing/session-builder';
import {
  distillationDedupeKey,
  distillationWindow,
  MIN_USER_MESSAGES_FOR_SESSION_END,
} from './triggers';

const T0 = Date.UTC(2026, 1, 16, 9, 0);

describe('distillationDedupeKey', () => {
  it('should be the sha256 of sessionId, trigger and the first entry time', () => {
    const expected = createHash('sha256')
      .update(JSON.stringify(['s-1', 'CompactionPending', new Date(T0).toISOString()]))
      .digest('hex');
    expect(distillationDedupeKey('s-1', 'CompactionPending', T0)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('should differ by trigger, session and window start, and only by them', () => {
    const key = distillationDedupeKey('s-1', 'SessionEnded', T0);
    expect(distillationDedupeKey('s-1', 'SessionEnded', T0)).toBe(key);
    expect(distillationDedupeKey('s-1', 'CompactionPending', T0)).not.toBe(key);
    expect(distillationDedupeKey('s-2', 'SessionEnded', T0)).not.toBe(key);
    expect(distillationDedupeKey('s-1', 'SessionEnded', T0 + 1)).not.toBe(key);
  });

  it('should not collide when parts shift characters between them', () => {
    expect(distillationDedupeKey('s-1E', 'SessionEnded', T0)).not.toBe(
      distillationDedupeKey('s-1', 'SessionEnded', T0),
    );
  });
});

describe('distillationWindow', () => {
  it('should give a redelivered trigger the same window and key', () => {
    const session = debuggingSession();
    const trigger = session.episodeClosed();
    const first = distillationWindow(trigger, session.events());
    const again = distillationWindow(trigger, {
      ...session.events(),
      // A redelivery may also see duplicated events, in another order.
      prompts: [...session.prompts].reverse().concat(session.prompts),
    });
    expect(first.kind).toBe('distill');
    expect(again).toEqual(first);
  });

  it('should give a compaction and the shutdown of one session two different keys', () => {
    const session = debuggingSession();
    const compaction = distillationWindow(session.compactionPending(1, 3), session.events());
    const shutdown = distillationWindow(session.sessionEnded(), session.events());
    expect(compaction.kind).toBe('distill');
    expect(shutdown.kind).toBe('distill');
    if (compaction.kind !== 'distill' || shutdown.kind !== 'distill') return;
    expect(compaction.window.dedupeKey).not.toBe(shutdown.window.dedupeKey);
    expect(compaction.window.prompts.map((p) => p.promptId)).toEqual([1, 2, 3]);
    expect(compaction.window.closed).toBe(false);
    expect(shutdown.window.prompts).toHaveLength(session.prompts.length);
  });

  it('should skip a session end below five user messages', () => {
    const session = new SessionBuilder('short', T0);
    for (let i = 0; i < MIN_USER_MESSAGES_FOR_SESSION_END - 1; i += 1) {
      session.user(`fix the build step ${i}`);
    }
    const decision = distillationWindow(session.sessionEnded(), session.events());
    expect(decision).toEqual({
      kind: 'skip',
      reason: expect.stringContaining('4 user messages') as string,
    });
  });

  it('should distill a session end with five user messages', () => {
    const session = new SessionBuilder('five', T0);
    for (let i = 0; i < 5; i += 1) session.user(`fix the build step ${i}`);
    expect(distillationWindow(session.sessionEnded(), session.events()).kind).toBe('distill');
  });

  it("should limit an EpisodeClosed window to the episode's prompt range and tool calls", () => {
    const session = debuggingSession();
    const decision = distillationWindow(session.episodeClosed(2, 3, 'ep-2'), session.events());
    if (decision.kind !== 'distill') throw new Error('expected a window');
    const { window } = decision;
    expect(window.prompts.map((p) => p.promptId)).toEqual([2, 3]);
    expect(window.toolCalls.every((c) => c.promptId >= 2 && c.promptId <= 3)).toBe(true);
    expect(window.segments).toEqual([{ episodeId: 'ep-2', firstPromptId: 2, lastPromptId: 3 }]);
    expect(window.firstEntryAt).toBe(session.prompts[1].timestamp);
    expect(window.episodeId).toBe('ep-2');
  });

  it('should ignore events of other sessions', () => {
    const session = debuggingSession();
    const other = new SessionBuilder('other', T0);
    other.user('an unrelated prompt about billing exports');
    const decision = distillationWindow(session.sessionEnded(), {
      prompts: [...session.prompts, ...other.prompts],
      toolCalls: session.toolCalls,
    });
    if (decision.kind !== 'distill') throw new Error('expected a window');
    expect(decision.window.prompts.every((p) => p.sessionId === 'sess-debug')).toBe(true);
  });

  it('should make one segment per known episode and stretch the ends over the window', () => {
    const session = debuggingSession();
    const decision = distillationWindow(session.sessionEnded(), {
      ...session.events(),
      episodes: [
        { episodeId: 'ep-b', firstPromptId: 4, lastPromptId: 5 },
        { episodeId: 'ep-a', firstPromptId: 2, lastPromptId: 3 },
      ],
    });
    if (decision.kind !== 'distill') throw new Error('expected a window');
    expect(decision.window.segments).toEqual([
      { episodeId: 'ep-a', firstPromptId: 1, lastPromptId: 3 },
      { episodeId: 'ep-b', firstPromptId: 4, lastPromptId: 6 },
    ]);
  });

  it('should skip a window without events', () => {
    const session = new SessionBuilder('empty', T0);
    const decision = distillationWindow(session.compactionPending(), session.events());
    expect(decision.kind).toBe('skip');
  });

  it('should keep a compaction without a prompt range to the events before it', () => {
    const session = debuggingSession();
    const trigger = session.compactionPending();
    session.user('a prompt after the compaction about something else entirely');
    const decision = distillationWindow(trigger, session.events());
    if (decision.kind !== 'distill') throw new Error('expected a window');
    expect(decision.window.prompts.map((p) => p.promptId)).not.toContain(7);
    expect(decision.window.prompts).toHaveLength(6);
  });
});
