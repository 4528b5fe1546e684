import type { LifecycleEvent, Memory, Typed } from '@engram/contracts';
import { decodeStateJson, observerSettings } from '@engram/core';
import {
  contractCodec,
  type AnyStageOutput,
  type Delivered,
  type RawStageOutput,
  type StageOutput,
} from '@engram/core';
import { describe, expect, it } from 'vitest';
import { memory as memoryFixture } from '../../../libs/core/src/retrieval/testing/fixtures';
import { DEFAULT_OBSERVER_TOPICS } from './observer.stage';
import { pipeline, validMemories } from './testing/promotion-pipeline';
import { episodeFeedStage } from './episode-feed.stage';
import { ProjectPromotionStage } from './project-promotion.stage';
import { projectWorkCodec, type ProjectWork } from './project-work';
import {
  ACME,
  bash,
  edit,
  read,
  rememberRequested,
  sessionCalls,
  sessionEnded,
  sessionStarted,
  subtaskValidated,
  T0,
  validationPassed,
  type CallSpec,
} from './testing/observer-events';

const HOUR = 3_600_000;
const TOKEN = 'src/auth/token.ts';
const SESSION = 'src/auth/session.ts';
const SPEC = 'src/auth/token.spec.ts';

/** The same fix each time: read the token and session modules together, fail, fix, pass. */
const WORK: CallSpec[] = [
  read(TOKEN),
  read(SESSION),
  edit(SESSION),
  bash('npm test -- auth', 'FAIL src/auth/token.spec.ts:41 expected 200, got 401'),
  read(SPEC),
  edit(TOKEN),
  bash('npm test -- auth'),
];

/** An annotated episode of session `sessionId` covering its prompts 1–3 (the fields used). */
function episodeOf(sessionId: string): Typed<'Episode'> {
  return {
    type: 'Episode',
    ...ACME,
    sessionId,
    firstPromptId: 1,
    lastPromptId: 3,
  } as Typed<'Episode'>;
}

/** Session `s<index>`'s events: WORK, an optional note, validation passed, session ended. */
function validatedSessionEvents(index: number, note?: string) {
  const sessionId = `s${index}`;
  const at = T0 + index * HOUR;
  const calls = sessionCalls(ACME, sessionId, WORK, at);
  const lifecycle: LifecycleEvent[] = [];
  if (note) lifecycle.push(rememberRequested(ACME, sessionId, at + 30_000, note));
  lifecycle.push(validationPassed(ACME, sessionId, at + 40_000));
  lifecycle.push(sessionEnded(ACME, sessionId, at + 60_000));
  return { calls, lifecycle };
}

async function validatedSession(p: ReturnType<typeof pipeline>, index: number, note?: string) {
  const { calls, lifecycle } = validatedSessionEvents(index, note);
  await p.calls(calls);
  await p.lifecycle(lifecycle);
  await p.promote();
}

describe('ProjectPromotionStage', () => {
  it("should promote an agent's explicit note once its work validates, with provenance", async () => {
    const p = pipeline();
    await validatedSession(p, 0, 'Always run `npm run migrate` before the auth tests');
    const note = p.memories.find((m) => m.source === 'agent_explicit');
    expect(note).toMatchObject({
      tenantId: 'acme',
      projectId: 'acme/api',
      sessionId: 's0',
      agentId: 'engram-observer',
      timestamp: T0 + 40_000,
      confidence: 0.9,
    });
    expect(note!.content).toContain('npm run migrate');
    expect(note!.sourceEventIds).toContain('s0:remember:' + String(T0 + 30_000));
  });

  it('should learn cross-session patterns only once the project has seen them often enough', async () => {
    const p = pipeline();
    const typesAfter: string[][] = [];
    for (let i = 0; i < 5; i++) {
      const before = p.memories.length;
      await validatedSession(p, i);
      typesAfter.push(p.memories.slice(before).map((m) => m.memoryType));
    }
    // One or two sessions prove nothing (frequency thresholds); the third makes the patterns.
    expect(typesAfter.slice(0, 2)).toEqual([[], []]);
    expect(new Set(typesAfter[2])).toEqual(
      new Set(['error_pattern', 'causal_dependency', 'prefetch_pattern', 'workflow_recipe']),
    );
    const prefetch = p.memories.find((m) => m.memoryType === 'prefetch_pattern')!;
    expect(prefetch.relatedFiles).toEqual(expect.arrayContaining([TOKEN, SESSION]));
    // Later sessions confirm the same memories: the same ids, upserted, never duplicates.
    const idsOf = (from: number, to: number) =>
      new Set(p.memories.slice(from, to).map((m) => m.memoryId));
    const perSession = typesAfter.map((t) => t.length);
    const third = idsOf(0, perSession[2]);
    expect(idsOf(perSession[2], perSession[2] + perSession[3])).toEqual(third);
    for (const memory of p.memories) {
      expect(memory.provenanceSessionIds.length).toBeGreaterThan(0);
      expect(memory.sourceEventIds.length).toBeGreaterThan(0);
    }
    console.log(`memories per session: ${JSON.stringify(typesAfter)}`);
  });

  it("should name the episode of a memory's newest evidence, from the segmenter's episodes", async () => {
    const p = pipeline();
    const feed = episodeFeedStage(projectWorkCodec(DEFAULT_OBSERVER_TOPICS.projectWork));
    const episodes = [0, 1, 2].map((i) => ({ ...episodeOf(`s${i}`), episodeId: `e-s${i}` }));
    const [fed] = (await feed.transform(p.delivered(episodes))) as StageOutput<ProjectWork>[];
    p.work.push(...fed.events);
    for (let i = 0; i < 3; i++) await validatedSession(p, i);
    const patterns = p.memories.filter((m) => m.memoryType === 'prefetch_pattern');
    expect(patterns.length).toBeGreaterThan(0);
    // The newest evidence is the third session's (prompt 1, inside its episode).
    expect(patterns.map((m) => m.episodeId)).toEqual(patterns.map(() => 'e-s2'));
  });

  it('should consolidate a spec of ten validated subtasks into global module insights, once', async () => {
    const p = pipeline();
    const subtasks = 10;
    for (let i = 1; i <= subtasks; i += 1) {
      const at = T0 + i * 600_000;
      // Every subtask edits the token module and one file of its own: token.ts is the hotspot.
      await p.calls(
        sessionCalls(
          ACME,
          'spec',
          [read(TOKEN), edit(TOKEN), edit(`src/auth/step${i}.ts`)],
          at,
        ).map((call, step) => ({ ...call, eventId: `spec:${i}:${step}`, promptId: i })),
      );
      await p.lifecycle([subtaskValidated(ACME, 'spec', at + 300_000, i, subtasks)]);
    }
    await p.lifecycle([
      validationPassed(ACME, 'spec', T0 + 8 * HOUR),
      sessionEnded(ACME, 'spec', T0 + 8 * HOUR + 1_000),
    ]);
    await p.promote();
    const insights = p.memories.filter((m) => m.scope === 'global');
    expect(insights.length).toBeGreaterThanOrEqual(2);
    expect(insights.every((m) => m.memoryType === 'module_insight')).toBe(true);
    expect(insights.map((m) => m.content).join('\n')).toContain(TOKEN);
    expect(insights[0].timestamp).toBe(T0 + 8 * HOUR);
    // A second pass of the same scratchpad (its session's end) consolidates nothing again.
    const count = p.memories.length;
    await p.lifecycle([validationPassed(ACME, 'spec', T0 + 9 * HOUR)]);
    await p.promote();
    expect(p.memories.slice(count).filter((m) => m.scope === 'global')).toEqual([]);
  });

  it('should give the same memories and state when a batch is redelivered after an abort', async () => {
    const p = pipeline();
    await validatedSession(p, 0);
    await validatedSession(p, 1);
    await p.calls(sessionCalls(ACME, 's2', WORK, T0 + 2 * HOUR));
    await p.lifecycle([
      validationPassed(ACME, 's2', T0 + 2 * HOUR + 40_000),
      sessionEnded(ACME, 's2', T0 + 2 * HOUR + 60_000),
    ]);
    const pending = p.work.splice(0);
    const batch = p.delivered(pending);
    const first = await p.promotion.transform(batch);
    p.promotion.onAborted();
    const again = await p.promotion.transform(batch);
    p.promotion.onCommitted();
    const memoriesOf = (outputs: AnyStageOutput[]) =>
      outputs.flatMap((o) => ('codec' in o ? (o.events as Memory[]) : []));
    expect(memoriesOf(again)).toEqual(memoriesOf(first));
    expect((again[1] as RawStageOutput).messages).toEqual((first[1] as RawStageOutput).messages);
  });

  it('should ignore an ended session published again, yet observe the same session resumed', async () => {
    const p = pipeline();
    await validatedSession(p, 0);
    await validatedSession(p, 1, 'Always run `npm run migrate` before the auth tests');
    const memories = p.memories.length;
    const projectState = new Map(p.projectLog);
    const graphBatches = p.graph.length;
    const duplicates = p.observer.counters.duplicates;

    // The hook's spool re-sends the whole of session s1 (same eventIds) after it ended.
    const { calls, lifecycle } = validatedSessionEvents(
      1,
      'Always run `npm run migrate` before the auth tests',
    );
    await p.calls(calls);
    await p.lifecycle(lifecycle);
    await p.promote();

    expect(p.observer.counters.duplicates - duplicates).toBe(calls.length + lifecycle.length);
    expect(p.memories.slice(memories)).toEqual([]);
    expect(p.projectLog).toEqual(projectState);
    expect(p.graph.slice(graphBatches)).toEqual([]);
    expect(p.observer.openSessions).toBe(0);

    // Claude Code --resume: the same session id goes on, after a new SessionStarted, with new ids.
    const at = T0 + 5 * HOUR;
    const resumed = sessionCalls(ACME, 's1', WORK, at).map((call) => ({
      ...call,
      eventId: `s1:resumed:call:${call.stepIndex}`,
      promptId: 2,
    }));
    await p.lifecycle([{ ...sessionStarted(ACME, 's1', at - 1_000), eventId: 's1:resumed:start' }]);
    await p.calls(resumed);
    await p.lifecycle([
      validationPassed(ACME, 's1', at + 40_000),
      { ...sessionEnded(ACME, 's1', at + 60_000), eventId: 's1:resumed:end' },
    ]);
    await p.promote();

    expect(p.observer.counters.duplicates - duplicates).toBe(calls.length + lifecycle.length);
    const observed = p.graph.slice(graphBatches);
    expect(observed.flatMap((batch) => batch.sessions.map((s) => s.sessionId))).toContain('s1');
    expect(observed.at(-1)!.sessions).toEqual([
      expect.objectContaining({ sessionId: 's1', toolCalls: WORK.length, endedAt: at + 60_000 }),
    ]);
    expect(p.projectLog).not.toEqual(projectState);
    // Its work is the third time the project sees the failing test: promoted now.
    expect(p.memories.slice(memories).map((m) => m.memoryType)).toContain('error_pattern');

    // The resumed run's events, published again in turn, are duplicates too.
    const again = p.graph.length;
    await p.calls(resumed);
    await p.promote();
    expect(p.graph.length).toBe(again);
  });
  // Issue #19: two clean runs of one input gave different memories, because a promotion saw the
  // other sessions' signals that had happened to arrive before it (partitions, topics, batches).
  describe('whatever the interleaving and batching of the same events (issue #19)', () => {
    const WEB = { tenantId: 'acme', projectId: 'acme/web' };
    const OTHER_WORK: CallSpec[] = [
      read(TOKEN),
      read(SPEC),
      edit(SPEC),
      bash('npm test -- auth', 'FAIL src/auth/token.spec.ts:41 expected 200, got 401'),
      edit(TOKEN),
      bash('npm test -- auth'),
    ];
    const WEB_WORK: CallSpec[] = [
      read('src/ui/form.tsx'),
      read('src/ui/field.tsx'),
      edit('src/ui/form.tsx'),
      bash('npm run lint', 'error  Missing return type  src/ui/form.tsx:12'),
      edit('src/ui/form.tsx'),
      bash('npm run lint'),
    ];
    /** Seven sessions of two projects, some sharing patterns, some not; an hour apart. */
    const sessions = [
      { scope: ACME, id: 'a0', work: WORK, validated: true },
      { scope: ACME, id: 'a1', work: OTHER_WORK, validated: false },
      { scope: WEB, id: 'w0', work: WEB_WORK, validated: true },
      { scope: ACME, id: 'a2', work: WORK, validated: true },
      { scope: WEB, id: 'w1', work: WEB_WORK, validated: false },
      { scope: ACME, id: 'a3', work: OTHER_WORK, validated: true },
      { scope: WEB, id: 'w2', work: WEB_WORK, validated: true },
      { scope: ACME, id: 'a4', work: WORK, validated: true },
    ].map(({ scope, id, work, validated }, i) => {
      const at = T0 + i * HOUR;
      const lifecycle: LifecycleEvent[] = validated
        ? [validationPassed(scope, id, at + 40_000), sessionEnded(scope, id, at + 60_000)]
        : [sessionEnded(scope, id, at + 60_000)];
      return { calls: sessionCalls(scope, id, work, at), lifecycle };
    });

    /** Runs the events in the given steps; the memory topic's final content, by memoryId. */
    async function run(
      steps: Array<{ calls?: number[]; lifecycle?: number[]; promote?: boolean }>,
    ): Promise<Map<string, Memory>> {
      const p = pipeline();
      for (const step of steps) {
        if (step.calls) await p.calls(step.calls.flatMap((i) => sessions[i].calls));
        if (step.lifecycle) await p.lifecycle(step.lifecycle.flatMap((i) => sessions[i].lifecycle));
        if (step.promote !== false) await p.promote();
      }
      await p.promote();
      return new Map([...p.latest].sort(([a], [b]) => (a < b ? -1 : 1)));
    }
    const all = sessions.map((_, i) => i);

    it('should promote the same memories, session by session or all calls before any end', async () => {
      // In event-time order, each session's calls then its end, promoted at once.
      const inOrder = await run(all.map((i) => ({ calls: [i], lifecycle: [i] })));
      // Every session's calls first (last session first), then the ends, newest first.
      const callsFirst = await run([
        ...[...all].reverse().map((i) => ({ calls: [i] })),
        ...[...all].reverse().map((i) => ({ lifecycle: [i] })),
      ]);
      // Everything in one batch per topic, the project stage run once at the end.
      const oneBatch = await run([
        { calls: all, promote: false },
        { lifecycle: all, promote: false },
      ]);
      // Ends interleaved with other sessions' calls, the project stage run every other step.
      const mixed = await run([
        { calls: [0, 2, 4], promote: false },
        { lifecycle: [2] },
        { calls: [1, 3, 7], lifecycle: [0, 4], promote: false },
        { calls: [5, 6], lifecycle: [7, 3] },
        { lifecycle: [1, 6, 5] },
      ]);
      expect(inOrder.size).toBeGreaterThan(0);
      expect(new Set([...inOrder.values()].map((m) => m.projectId))).toEqual(
        new Set(['acme/api', 'acme/web']),
      );
      console.log(
        `memories: in order ${inOrder.size}, calls first ${callsFirst.size}, ` +
          `one batch ${oneBatch.size}, mixed ${mixed.size}`,
      );
      for (const other of [callsFirst, oneBatch, mixed]) {
        expect([...other.keys()]).toEqual([...inOrder.keys()]);
        expect([...other.values()]).toEqual([...inOrder.values()]);
      }
    });
  });
});

describe('ProjectPromotionStage: commits rename and delete files (issue #20)', () => {
  const LEGACY = 'src/auth/legacy.ts';
  const about = (memoryId: string, relatedFiles: string[]): Memory =>
    memoryFixture({ memoryId, ...ACME, relatedFiles });
  const changes = (
    eventId: string,
    renamed: { from: string; to: string }[],
    deleted: string[],
  ) => ({
    eventId,
    ...ACME,
    sha: eventId,
    at: T0 + HOUR,
    renamed,
    deleted,
  });
  const delivered = (work: Partial<ProjectWork>, offset: number): Delivered<ProjectWork> => ({
    event: {
      v: 1,
      ...ACME,
      signals: [],
      summaries: [],
      promotions: [],
      ...work,
    },
    topic: DEFAULT_OBSERVER_TOPICS.projectWork,
    partition: 0,
    offset: String(offset),
    key: null,
    headers: undefined,
  });

  it('should write the next versions of the memories the commits change, newest first in the batch', async () => {
    const committed = [about('a', [SESSION]), about('b', [LEGACY]), about('c', [TOKEN])];
    const asked: string[][] = [];
    const stage = new ProjectPromotionStage({
      settings: observerSettings(),
      stateTopic: DEFAULT_OBSERVER_TOPICS.projectState,
      memories: contractCodec('memory.memories.v1'),
      restore: () => Promise.resolve(new Map()),
      memoriesByFile: {
        memoriesAbout: (_scope, paths) => {
          asked.push([...paths]);
          return Promise.resolve(
            committed.filter((m) => m.relatedFiles.some((f) => paths.includes(f))),
          );
        },
      },
    });
    const outputs = await stage.transform([
      delivered(
        { fileChanges: [changes('c1', [{ from: SESSION, to: 'src/auth/sessions.ts' }], [LEGACY])] },
        0,
      ),
      // In the same batch, a second commit moves it again: the batch's version is the newer one.
      delivered(
        {
          fileChanges: [
            changes('c2', [{ from: 'src/auth/sessions.ts', to: 'src/sessions.ts' }], []),
          ],
        },
        1,
      ),
    ]);
    const written = validMemories(outputs[0] as StageOutput<Typed<'Memory'>>);
    expect(written.map((m) => [m.memoryId, m.relatedFiles, m.staleAt])).toEqual([
      ['a', ['src/auth/sessions.ts'], null],
      ['b', [LEGACY], T0 + HOUR],
      ['a', ['src/sessions.ts'], null],
    ]);
    expect(written[2].tags).toEqual(
      expect.arrayContaining([`renamed-from:${SESSION}`, 'renamed-from:src/auth/sessions.ts']),
    );
    expect(asked).toEqual([[SESSION, LEGACY], ['src/auth/sessions.ts']]);
    expect(stage.counters.revisedForFiles).toBe(3);
  });

  it('should leave memories alone without a lookup', async () => {
    const stage = new ProjectPromotionStage({
      settings: observerSettings(),
      stateTopic: DEFAULT_OBSERVER_TOPICS.projectState,
      memories: contractCodec('memory.memories.v1'),
      restore: () => Promise.resolve(new Map()),
    });
    const outputs = await stage.transform([
      delivered({ fileChanges: [changes('c1', [], [LEGACY])] }, 0),
    ]);
    expect((outputs[0] as StageOutput<Typed<'Memory'>>).events).toEqual([]);
  });
});

describe('the sweep against a FileManifest (issue #20)', () => {
  const LEGACY = 'src/auth/legacy.ts';
  const MANIFEST_AT = T0 + 2 * HOUR;
  const manifest = (
    sessionId: string,
    files: string[],
    at = MANIFEST_AT,
    headSha = 'c0ffee',
  ): Typed<'FileManifest'> => ({
    type: 'FileManifest',
    eventId: `${sessionId}:manifest:${headSha}`,
    ...ACME,
    sessionId,
    agentId: 'claude-code',
    userId: null,
    timestamp: at,
    schemaVersion: 1,
    headSha,
    files,
  });
  /** Files at HEAD: the token and session modules and 1,000 others, not the legacy module. */
  const AT_HEAD = [
    TOKEN,
    SESSION,
    SPEC,
    ...Array.from({ length: 1_000 }, (_, i) => `src/generated/file${i}.ts`),
  ];

  function seeded() {
    const p = pipeline({ files: true });
    const committed = [
      memoryFixture({ memoryId: 'only-legacy', ...ACME, relatedFiles: [LEGACY] }),
      memoryFixture({ memoryId: 'token-and-legacy', ...ACME, relatedFiles: [TOKEN, LEGACY] }),
      memoryFixture({ memoryId: 'session', ...ACME, relatedFiles: [SESSION] }),
      memoryFixture({ memoryId: 'no-files', ...ACME, relatedFiles: [] }),
      memoryFixture({
        memoryId: 'other-project',
        tenantId: 'acme',
        projectId: 'acme/web',
        relatedFiles: [LEGACY],
      }),
    ];
    for (const m of committed) p.latest.set(m.memoryId, m);
    return p;
  }

  it('should mark stale the memories whose files are all absent and trim the others', async () => {
    const p = seeded();
    await p.lifecycle([sessionStarted(ACME, 's1', MANIFEST_AT - 1_000), manifest('s1', AT_HEAD)]);
    // Only the deletions go to the project stage, never the manifest's files.
    expect(p.work.flatMap((w) => w.fileChanges ?? [])).toEqual([
      {
        eventId: 's1:manifest:c0ffee',
        ...ACME,
        sha: 'c0ffee',
        at: MANIFEST_AT,
        renamed: [],
        deleted: [LEGACY],
      },
    ]);
    await p.promote();
    expect(p.memories.map((m) => [m.memoryId, m.relatedFiles, m.staleAt])).toEqual([
      ['only-legacy', [LEGACY], MANIFEST_AT],
      ['token-and-legacy', [TOKEN], null],
    ]);
    expect(p.memories[1].tags).toContain(`file-deleted:${LEGACY}`);
    expect(p.memories.every((m) => m.sourceEventIds.includes('s1:manifest:c0ffee'))).toBe(true);
    expect(p.latest.get('session')?.staleAt).toBeNull();
    expect(p.latest.get('other-project')?.staleAt).toBeNull();
    expect(p.observer.counters).toMatchObject({ manifestsSwept: 1, manifestAbsentPaths: 1 });
  });

  it('should write nothing for the same manifest again, redelivered or from another session', async () => {
    const p = seeded();
    await p.lifecycle([sessionStarted(ACME, 's1', MANIFEST_AT - 1_000), manifest('s1', AT_HEAD)]);
    await p.promote();
    const written = p.memories.length;
    expect(written).toBe(2);
    // The hook delivered again: the same event, a duplicate.
    await p.lifecycle([manifest('s1', AT_HEAD)]);
    await p.promote();
    // Another session at the same HEAD: a new event, the same files: nothing left to change.
    await p.lifecycle([
      sessionStarted(ACME, 's2', MANIFEST_AT + HOUR),
      manifest('s2', AT_HEAD, MANIFEST_AT + HOUR),
    ]);
    await p.promote();
    expect(p.memories).toHaveLength(written);
    expect(p.latest.get('only-legacy')?.staleAt).toBe(MANIFEST_AT);
  });

  it('should give the same versions on a replay (deterministic ids)', async () => {
    const run = async () => {
      const p = seeded();
      await p.lifecycle([sessionStarted(ACME, 's1', MANIFEST_AT - 1_000), manifest('s1', AT_HEAD)]);
      await p.promote();
      return p.memories;
    };
    expect(await run()).toEqual(await run());
  });

  it('should leave the memories alone when every file is in the manifest', async () => {
    const p = seeded();
    await p.lifecycle([
      sessionStarted(ACME, 's1', MANIFEST_AT - 1_000),
      manifest('s1', [...AT_HEAD, LEGACY]),
    ]);
    await p.promote();
    expect(p.memories).toEqual([]);
  });

  it('should keep a waiting manifest in the changelog without its files', async () => {
    const p = seeded();
    // The tool calls are behind: the lifecycle events wait in the session's record.
    p.toolCalls.end = 5;
    await p.lifecycle([sessionStarted(ACME, 's1', MANIFEST_AT - 1_000), manifest('s1', AT_HEAD)]);
    const record = JSON.stringify([...p.sessionLog.values()].map((v) => decodeStateJson(v)));
    expect(record).toContain('s1:manifest:c0ffee');
    expect(record).not.toContain('src/generated/file1.ts');
    expect(p.work.flatMap((w) => w.fileChanges ?? [])).toEqual([]);
    expect(p.observer.pendingLifecycle).toBe(2);
  });
});
