import { describe, expect, it } from 'vitest';
import {
  addPrompt,
  addToolCall,
  DEFAULT_DISTILLER_RETENTION,
  DEFAULT_DISTILLER_SESSION_LIMITS,
  newDistillerSession,
  noteEpisodeClosed,
  noteEpisodeOpened,
  noteSeen,
  progressOf,
  sessionDone,
  sessionEventsOf,
  takeReadyTriggers,
  waitTarget,
  type DistillerSession,
} from './distiller-session';
import { debuggingSession } from './testing/session-builder';
import { distillationWindow } from './triggers';

const NOW = Date.UTC(2026, 10, 23, 12, 0);

function sessionWithEvents(): {
  session: DistillerSession;
  builder: ReturnType<typeof debuggingSession>;
} {
  const builder = debuggingSession();
  const session = newDistillerSession({
    sessionId: builder.sessionId,
    tenantId: builder.tenantId,
    projectId: builder.projectId,
  });
  for (const prompt of builder.prompts) addPrompt(session, prompt);
  for (const call of builder.toolCalls) addToolCall(session, call);
  return { session, builder };
}

describe('distiller session state', () => {
  it('should keep each event once and bound what it keeps', () => {
    const { session, builder } = sessionWithEvents();
    expect(addPrompt(session, builder.prompts[0])).toBe(false);
    expect(addToolCall(session, builder.toolCalls[0])).toBe(false);
    expect(session.prompts).toHaveLength(builder.prompts.length);
    const limits = { ...DEFAULT_DISTILLER_SESSION_LIMITS, maxPrompts: 2, maxPromptChars: 10 };
    const small = newDistillerSession(session);
    for (const prompt of builder.prompts) addPrompt(small, prompt, limits);
    // The oldest go, the recent work stays; texts are cut.
    expect(small.prompts.map((p) => p.promptId)).toEqual(
      builder.prompts.slice(-2).map((p) => p.promptId),
    );
    expect(small.prompts.every((p) => p.text.length <= 10)).toBe(true);
    expect(session.lastActivityAt).toBe(builder.now);
  });

  it('should give an open episode the rest of the session as its range', () => {
    const { session } = sessionWithEvents();
    noteEpisodeOpened(session, { episodeId: 'e1', firstPromptId: 1, timestamp: 1 });
    noteEpisodeClosed(session, {
      episodeId: 'e1',
      firstPromptId: 1,
      lastPromptId: 2,
      reason: 'intent_shift',
    });
    noteEpisodeOpened(session, { episodeId: 'e3', firstPromptId: 3, timestamp: 2 });
    expect(sessionEventsOf(session).episodes).toEqual([
      { episodeId: 'e1', firstPromptId: 1, lastPromptId: 2 },
      { episodeId: 'e3', firstPromptId: 3, lastPromptId: Number.MAX_SAFE_INTEGER },
    ]);
    expect(session.finalCloseSeen).toBe(false);
    noteEpisodeClosed(session, {
      episodeId: 'e3',
      firstPromptId: 3,
      lastPromptId: 6,
      reason: 'session_end',
    });
    expect(session.finalCloseSeen).toBe(true);
  });

  it('should release waiting triggers in order, once their inputs are consumed', () => {
    const { session, builder } = sessionWithEvents();
    const ends = { prompts: 10, toolCalls: 20, boundaries: 5 };
    const end = builder.sessionEnded();
    const close = builder.episodeClosed();
    session.pending.push({ trigger: end, until: waitTarget(end, ends) });
    session.pending.push({ trigger: close, until: waitTarget(close, ends) });
    // An episode close does not wait for later boundaries; an end does.
    expect(session.pending[1].until).toEqual({ prompts: 10, toolCalls: 20, boundaries: 0 });
    expect(takeReadyTriggers(session, { prompts: 10, toolCalls: 20, boundaries: 4 }, NOW)).toEqual(
      [],
    );
    const ready = takeReadyTriggers(session, { prompts: 10, toolCalls: 20, boundaries: 5 }, NOW);
    expect(ready.map((t) => t.kind)).toEqual(['SessionEnded', 'EpisodeClosed']);
    expect(session.endedAt).toBe(end.event.timestamp);
    expect(session.endSeenAt).toBe(NOW);
    // The released trigger's window is the core's.
    const decision = distillationWindow(ready[0], sessionEventsOf(session));
    expect(decision.kind).toBe('distill');
  });

  it('should drop a session once it ended and the final close came, or the grace passed', () => {
    const { session, builder } = sessionWithEvents();
    noteSeen(session, NOW);
    expect(sessionDone(progressOf(session), NOW)).toBe(false);
    session.endSeenAt = NOW;
    expect(sessionDone(progressOf(session), NOW)).toBe(false);
    const later = NOW + DEFAULT_DISTILLER_RETENTION.endGraceMs;
    expect(sessionDone(progressOf(session), later)).toBe(true);
    session.finalCloseSeen = true;
    expect(sessionDone(progressOf(session), NOW)).toBe(true);
    // Never while a trigger waits.
    session.pending.push({
      trigger: builder.compactionPending(),
      until: { prompts: 1, toolCalls: 1, boundaries: 1 },
    });
    expect(sessionDone(progressOf(session), later)).toBe(false);
  });

  it("should drop a session nothing came of for a day, whatever its events' times", () => {
    const { session } = sessionWithEvents();
    noteSeen(session, NOW);
    const idle = DEFAULT_DISTILLER_RETENTION.idleMs;
    expect(sessionDone(progressOf(session), NOW + idle - 1)).toBe(false);
    expect(sessionDone(progressOf(session), NOW + idle)).toBe(true);
  });
});
