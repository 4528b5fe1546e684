import type { LifecycleEvent, Typed } from '@engram/contracts';
import { DownstreamUnavailableError, pairKeyOf } from '@engram/core';
import type { StageOutput } from '@engram/core';
import { describe, expect, it } from 'vitest';
import {
  decodeRecord,
  type EndedSessionRecord,
  type ScratchpadRecord,
  type SessionRecord,
} from './observer-records';
import { changelogOf, delivered, harness } from './testing/observer-stage-harness';
import {
  ACME,
  bash,
  coreStats,
  edit,
  read,
  rememberRequested,
  sessionCalls,
  sessionEnded,
  sessionStarted,
  T0,
} from './testing/observer-events';

const A = 'src/auth/token.ts';
const B = 'src/auth/session.ts';
const C = 'src/db/pool.ts';

const SESSION_1 = sessionCalls(ACME, 's1', [read(A), read(B), edit(A), read(C)]);
const SESSION_2 = sessionCalls(ACME, 's2', [read(A), edit(B), bash('npm test', 'FAIL 1 of 3')]);

describe('ObserverStage', () => {
  it('should write per-session facts with their absolute values, as the core counts them', async () => {
    const { stage, writer, commit } = harness();
    commit(await stage.toolCallStage.transform(delivered(SESSION_1.slice(0, 2))));
    commit(await stage.toolCallStage.transform(delivered(SESSION_1.slice(2), 2)));

    const [first, second] = writer.batches;
    expect(first.newlyTouchedFiles.map((f) => f.path)).toEqual([A, B]);
    expect(second.newlyTouchedFiles.map((f) => f.path)).toEqual([C]);
    // The second batch carries the session's totals so far, not the batch's increments.
    const pair = second.sessionPairs.find((p) => p.fileA === B && p.fileB === A)!;
    const core = coreStats([SESSION_1]).coAccess.pairs[pairKeyOf(A, B)];
    expect(pair).toMatchObject({
      sessionId: 's1',
      rawCount: core.rawCount,
      aThenB: core.aThenB,
      bThenA: core.bThenA,
      sameStep: core.sameStep,
      timeDeltaSumMs: core.timeDeltaSumMs,
      lastObservedAt: core.lastObservedAt,
    });
    expect(pair.rawCount).toBe(2);
    expect(second.touches.find((t) => t.path === A)).toMatchObject({
      reads: 1,
      edits: 1,
      accesses: 2,
      firstAt: T0,
      lastAt: T0 + 2000,
    });
    expect(second.sessions).toEqual([
      expect.objectContaining({ sessionId: 's1', toolCalls: 4, startedAt: T0, endedAt: null }),
    ]);
  });

  it('should redo a batch whose graph write failed from the same committed state', async () => {
    const reference = harness();
    reference.commit(await reference.stage.toolCallStage.transform(delivered(SESSION_1)));
    reference.commit(await reference.stage.toolCallStage.transform(delivered(SESSION_2, 4)));

    const { stage, writer, commit, restores } = harness();
    commit(await stage.toolCallStage.transform(delivered(SESSION_1)));
    writer.failures = 1;
    await expect(stage.toolCallStage.transform(delivered(SESSION_2, 4))).rejects.toThrow(
      DownstreamUnavailableError,
    );
    stage.aborted();
    const redone = await stage.toolCallStage.transform(delivered(SESSION_2, 4));
    commit(redone);

    expect(writer.batches).toEqual(reference.writer.batches);
    expect(restores()).toBe(1);
  });

  it('should restore from the changelog after an ambiguous commit failure', async () => {
    const { stage, commit, restores } = harness();
    commit(await stage.toolCallStage.transform(delivered(SESSION_1.slice(0, 2))));
    await stage.toolCallStage.transform(delivered(SESSION_1.slice(2), 2));
    stage.aborted(); // the transform had completed: the commit's outcome is unknown
    commit(await stage.toolCallStage.transform(delivered(SESSION_1.slice(2), 2)));
    expect(restores()).toBe(2);
  });

  it('should continue after a restart from the changelog exactly as without one', async () => {
    const reference = harness();
    reference.commit(
      await reference.stage.toolCallStage.transform(delivered(SESSION_1.slice(0, 2))),
    );
    reference.commit(
      await reference.stage.toolCallStage.transform(delivered(SESSION_1.slice(2), 2)),
    );

    const before = harness();
    before.commit(await before.stage.toolCallStage.transform(delivered(SESSION_1.slice(0, 2))));
    const after = harness(before.log);
    after.commit(await after.stage.toolCallStage.transform(delivered(SESSION_1.slice(2), 2)));

    expect(after.writer.batches[0]).toEqual(reference.writer.batches[1]);
  });

  it('should change nothing when a batch is delivered again', async () => {
    const { stage, writer, commit } = harness();
    commit(await stage.toolCallStage.transform(delivered(SESSION_1)));
    const again = await stage.toolCallStage.transform(delivered(SESSION_1));
    expect(changelogOf(again).messages).toEqual([]);
    expect(writer.batches).toHaveLength(1);
    expect(stage.counters.duplicates).toBe(SESSION_1.length);
  });

  it('should end a session only once its tool calls are consumed, then drop its state', async () => {
    // The tool-calls partition holds the session's 3 calls when SessionEnded is read.
    const { stage, writer, log, commit } = harness(new Map(), {
      endOffset: () => Promise.resolve(3),
    });
    const end: LifecycleEvent = sessionEnded(ACME, 's2', T0 + 60_000);
    commit(await stage.lifecycleStage.transform(delivered([end])));
    expect(stage.pendingLifecycle).toBe(1);
    expect(log.has('session:s2')).toBe(true);

    commit(await stage.toolCallStage.transform(delivered(SESSION_2)));

    expect(stage.pendingLifecycle).toBe(0);
    expect(stage.counters.sessionsEnded).toBe(1);
    // What stays is the ended session's event ids, to recognise its events if they come again.
    expect([...log.keys()]).toEqual(['ended:s2']);
    const last = writer.batches[writer.batches.length - 1];
    expect(last.sessions[0]).toMatchObject({ sessionId: 's2', endedAt: T0 + 60_000 });
    // The failing test never passed: the end closes it as an unresolved error_retry.
    expect(last.errors).toEqual([
      expect.objectContaining({
        sessionId: 's2',
        toolName: 'Bash',
        occurrences: 1,
        episodes: 1,
        resolvedEpisodes: 0,
        lastResolution: 'unresolved',
      }),
    ]);
  });

  it('should apply a waiting SessionEnded from the timer once the group has consumed its calls', async () => {
    let committedOffset = 0;
    const { stage, commit } = harness(new Map(), {
      endOffset: () => Promise.resolve(3),
      committedOffsets: (partitions) =>
        Promise.resolve(new Map(partitions.map((p) => [p, committedOffset]))),
    });
    commit(await stage.lifecycleStage.transform(delivered([sessionEnded(ACME, 's2', T0)])));
    commit(await stage.sweep());
    expect(stage.pendingLifecycle).toBe(1);
    committedOffset = 3; // e.g. consumed by this group's previous owner of the partition
    commit(await stage.sweep());
    expect(stage.pendingLifecycle).toBe(0);
    expect(stage.openSessions).toBe(0);
  });

  it('should keep the scratchpad (signals and redacted notes) in the changelog', async () => {
    const { stage, log, commit } = harness();
    commit(await stage.toolCallStage.transform(delivered(SESSION_1)));
    const note = rememberRequested(ACME, 's1', T0 + 5000, 'the API key sk-abc123 must rotate');
    commit(await stage.lifecycleStage.transform(delivered([note])));

    const session = decodeRecord(log.get('session:s1')!) as SessionRecord;
    const pad = (decodeRecord(log.get(`scratchpad:${session.scratchpadId}`)!) as ScratchpadRecord)
      .pad;
    const [segment] = pad.segments;
    expect(segment.signals.length).toBe(stage.counters.signals);
    expect(segment.notes.map((n) => n.text)).toEqual(['the API key [REDACTED] must rotate']);

    // A restarted stage sees the same scratchpad.
    const restarted = harness(log);
    restarted.stage.onAssignment([0]);
    restarted.commit(await restarted.stage.sweep());
    expect(restarted.stage.openSessions).toBe(1);
  });

  it("should finish a session idle for sessionIdleMs of its partition's watermark", async () => {
    const { stage, log, commit } = harness(new Map(), {}, 60_000);
    commit(await stage.toolCallStage.transform(delivered(SESSION_1)));
    const later = sessionCalls(ACME, 's3', [read(C)], T0 + 120_000);
    commit(await stage.toolCallStage.transform(delivered(later, 4)));
    // Only the tool calls have moved on: s1's end may still be unread on the lifecycle topic.
    commit(await stage.sweep());
    expect(stage.counters.sessionsExpired).toBe(0);
    // Both topics of the partition are past s1's last activity + 60 s: s1 was abandoned.
    const started = sessionStarted(ACME, 's3', T0 + 119_000);
    commit(await stage.lifecycleStage.transform(delivered([started])));
    commit(await stage.sweep());
    expect(stage.counters.sessionsExpired).toBe(1);
    expect([...log.keys()].filter((key) => key.startsWith('session:'))).toEqual(['session:s3']);
  });

  it('should not expire a session of a lagging partition by another partition’s events (issue #19)', async () => {
    const { stage, commit } = harness(new Map(), {}, 60_000);
    const quiet = sessionCalls(ACME, 's1', [read(A)]);
    commit(await stage.toolCallStage.transform(delivered(quiet, 0, 0)));
    commit(
      await stage.lifecycleStage.transform(delivered([sessionStarted(ACME, 's1', T0 - 1)], 0, 0)),
    );
    // Partition 1 is read far ahead, in both topics: a day later.
    const ahead = sessionCalls(ACME, 's9', [read(B)], T0 + 86_400_000);
    commit(await stage.toolCallStage.transform(delivered(ahead, 0, 1)));
    const aheadStart = sessionStarted(ACME, 's9', T0 + 86_400_000);
    commit(await stage.lifecycleStage.transform(delivered([aheadStart], 0, 1)));
    commit(await stage.sweep());
    expect(stage.counters.sessionsExpired).toBe(0);
  });

  it('should count paths outside the project instead of writing them', async () => {
    const { stage, writer, commit } = harness();
    const calls: Typed<'ToolCallObserved'>[] = sessionCalls(ACME, 's4', [
      read('/etc/passwd', '../outside.ts', A),
    ]);
    commit(await stage.toolCallStage.transform(delivered(calls)));
    expect(stage.counters.rejectedPaths).toBe(2);
    expect(writer.batches[0].touches.map((t) => t.path)).toEqual([A]);
  });

  it('should ignore an ended session delivered again, also after a restart', async () => {
    const first = harness(new Map(), { endOffset: () => Promise.resolve(3) });
    first.commit(await first.stage.toolCallStage.transform(delivered(SESSION_2)));
    const end = sessionEnded(ACME, 's2', T0 + 60_000);
    first.commit(await first.stage.lifecycleStage.transform(delivered([end])));
    expect(first.stage.counters.sessionsEnded).toBe(1);
    const ended = decodeRecord(first.log.get('ended:s2')!) as EndedSessionRecord;
    expect(ended.seen.ids).toEqual([...SESSION_2.map((call) => call.eventId), end.eventId]);

    // Restarted: the ended session is restored with the partition, and its events come again.
    const { stage, writer, log, commit } = harness(new Map(first.log), {
      endOffset: () => Promise.resolve(6),
    });
    const before = new Map(log);
    const calls = await stage.toolCallStage.transform(delivered(SESSION_2, 3));
    const lifecycle = await stage.lifecycleStage.transform(delivered([end], 1));
    for (const outputs of [calls, lifecycle]) {
      expect(changelogOf(outputs).messages).toEqual([]);
      expect((outputs[1] as StageOutput<unknown>).events).toEqual([]);
    }
    commit(calls);
    commit(lifecycle);
    expect(writer.batches).toEqual([]);
    expect(log).toEqual(before);
    expect(stage.counters).toMatchObject({
      duplicates: SESSION_2.length + 1,
      signals: 0,
      sessionsEnded: 0,
    });
    expect(stage.openSessions).toBe(0);
    expect(stage.endedSessionsKept).toBe(1);
  });

  it('should observe a resumed session (new ids) and remember both runs when it ends', async () => {
    const { stage, writer, log, commit } = harness(new Map(), {
      endOffset: () => Promise.resolve(0),
    });
    const end = sessionEnded(ACME, 's2', T0 + 60_000);
    commit(await stage.toolCallStage.transform(delivered(SESSION_2)));
    commit(await stage.lifecycleStage.transform(delivered([end])));
    const batches = writer.batches.length;

    const at = T0 + 3_600_000;
    const resumed = sessionCalls(ACME, 's2', [read(C), edit(C)], at).map((call) => ({
      ...call,
      eventId: `s2:resumed:${call.stepIndex}`,
    }));
    const start = { ...sessionStarted(ACME, 's2', at - 1_000), eventId: 's2:resumed:start' };
    commit(await stage.lifecycleStage.transform(delivered([start], 1)));
    commit(await stage.toolCallStage.transform(delivered(resumed, 3)));
    expect(stage.counters.duplicates).toBe(0);
    expect(stage.openSessions).toBe(1);
    const observed = writer.batches.slice(batches);
    expect(observed.at(-1)!.touches.map((t) => t.path)).toEqual([C]);
    expect(observed.at(-1)!.sessions).toEqual([
      expect.objectContaining({ sessionId: 's2', toolCalls: 2, endedAt: null }),
    ]);

    // The first run's events, re-sent during the second run, are still duplicates.
    commit(await stage.toolCallStage.transform(delivered(SESSION_2, 5)));
    expect(stage.counters.duplicates).toBe(SESSION_2.length);

    const resumedEnd = { ...sessionEnded(ACME, 's2', at + 60_000), eventId: 's2:resumed:end' };
    commit(await stage.lifecycleStage.transform(delivered([resumedEnd], 2)));
    expect(stage.counters.sessionsEnded).toBe(2);
    expect([...log.keys()]).toEqual(['ended:s2']);
    const ended = decodeRecord(log.get('ended:s2')!) as EndedSessionRecord;
    expect(ended.seen.ids).toEqual([
      ...SESSION_2.map((call) => call.eventId),
      end.eventId,
      start.eventId,
      ...resumed.map((call) => call.eventId),
      resumedEnd.eventId,
    ]);
    expect(ended).toMatchObject({ lastActivityAt: at + 60_000, endedAt: at + 60_000 });
  });

  it("should forget an ended session after endedSessionRetentionMs of its partition's watermark", async () => {
    const { stage, log, commit } = harness(
      new Map(),
      { endOffset: () => Promise.resolve(0) },
      undefined,
      { endedSessionRetentionMs: 3_600_000 },
    );
    commit(await stage.toolCallStage.transform(delivered(SESSION_2)));
    commit(
      await stage.lifecycleStage.transform(delivered([sessionEnded(ACME, 's2', T0 + 60_000)])),
    );
    // Another session moves both topics on, to just before the window closes: kept.
    const edge = T0 + 60_000 + 3_599_999;
    const other = sessionCalls(ACME, 's5', [read(A)], edge);
    commit(await stage.toolCallStage.transform(delivered(other, 3)));
    commit(await stage.lifecycleStage.transform(delivered([sessionStarted(ACME, 's5', edge)], 1)));
    commit(await stage.sweep());
    expect(log.has('ended:s2')).toBe(true);
    const more = sessionCalls(ACME, 's5', [read(A), read(B)], edge).slice(1);
    commit(await stage.toolCallStage.transform(delivered(more, 4)));
    // (the tool calls alone are not enough: the lifecycle topic may still hold s2's events)
    commit(await stage.sweep());
    expect(log.has('ended:s2')).toBe(true);
    const end = sessionEnded(ACME, 's5', more[0].timestamp);
    commit(await stage.lifecycleStage.transform(delivered([end], 2)));
    commit(await stage.sweep());
    expect(log.has('ended:s2')).toBe(false);
    expect(stage.endedSessionsKept).toBe(1); // s5, which has just ended
    expect(stage.counters.endedSessionsForgotten).toBe(1);
  });
});
