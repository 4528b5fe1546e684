// The observer's topology on the embedded SQLite log and graph (SPEC §2).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LifecycleEvent, Memory, Typed } from '@engram/contracts';
import {
  codecOnTopic,
  contractCodec,
  isLoggedTombstone,
  memoryHistory,
  observerSettings,
  topNeighbours,
  type Synthesiser,
} from '@engram/core';
import {
  EmbeddedStreamPlatform,
  SqliteEventLog,
  SqliteEventLogAdapter,
  SqliteObserverGraph,
} from '@engram/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  observerCodecs,
  startObserver,
  type ObserverOptions,
  type RunningObserver,
} from './observer.topology';
import { DEFAULT_OBSERVER_TOPICS } from './observer.stage';
import {
  ACME,
  bash,
  coreStats,
  edit,
  read,
  sessionCalls,
  sessionEnded,
  T0,
  validationPassed,
  type CallSpec,
} from './testing/observer-events';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TOKEN = 'src/auth/token.ts';
const SESSION = 'src/auth/session.ts';
const WORK: CallSpec[] = [
  read(TOKEN),
  read(SESSION),
  edit(SESSION),
  bash('npm test -- auth', 'FAIL src/auth/token.spec.ts:41 expected 200, got 401'),
  edit(TOKEN),
  bash('npm test -- auth'),
];
const SESSIONS = 4;

/** `workUnits`: each session's validation names its own spec (else none). */
function recording(workUnits = false) {
  const calls = Array.from({ length: SESSIONS }, (_, i) =>
    sessionCalls(ACME, `s${i}`, WORK, T0 + i * HOUR),
  );
  const specOf = (i: number) => ({
    methodology: 'native',
    hierarchy: [`spec_${i}`],
    label: `Spec ${i}`,
  });
  const lifecycle: LifecycleEvent[] = calls.flatMap((_, i) => [
    {
      ...validationPassed(ACME, `s${i}`, T0 + i * HOUR + 40_000),
      ...(workUnits && { workUnitRef: specOf(i) }),
    },
    sessionEnded(ACME, `s${i}`, T0 + i * HOUR + 60_000),
  ]);
  return { calls, lifecycle, events: calls.flat().length + lifecycle.length };
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Everything consumed, every lifecycle event applied, every project-work record committed. */
const settled = (observer: RunningObserver, events: number) =>
  until(
    () =>
      observer.processor.counters.processed - observer.promotion.counters.committedWorks >=
        events &&
      observer.stage.pendingLifecycle === 0 &&
      observer.promotion.counters.committedWorks ===
        observer.stage.counters.projectWorks + observer.episodeFeed.counters.projectWorks,
  );

describe('observer on the embedded log and graph', () => {
  let dir: string;
  let log: SqliteEventLog;
  let graph: SqliteObserverGraph;
  const settings = observerSettings();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-observer-'));
    log = SqliteEventLog.open({ dataDir: dir });
    graph = SqliteObserverGraph.open({ dataDir: dir, rule: settings });
  });

  afterEach(() => {
    graph.close();
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (
    providers: Partial<
      Pick<
        ObserverOptions,
        'projectRootOf' | 'synthesiser' | 'clock' | 'pruneIntervalMs' | 'settings'
      >
    > = {},
  ) =>
    startObserver({
      platform: new EmbeddedStreamPlatform(log),
      graph,
      settings,
      sweepIntervalMs: 20,
      retry: { initialMs: 5, maxMs: 50 },
      ...providers,
    });

  /** The hook's events, as the spool publishes them: tool calls, then lifecycle. */
  async function publish(calls: Typed<'ToolCallObserved'>[][], lifecycle: LifecycleEvent[]) {
    const codecs = observerCodecs(DEFAULT_OBSERVER_TOPICS);
    const port = new SqliteEventLogAdapter(log);
    await port.publish(codecs.toolCalls, calls.flat());
    await port.publish(codecs.lifecycle, lifecycle);
  }

  const memories = (): Memory[] =>
    [...log.latestByKey(DEFAULT_OBSERVER_TOPICS.memories, [0, 1, 2]).values()].map(
      (value) => JSON.parse(value.toString('utf8')) as Memory,
    );

  it('should build the graph the core computes and promote memories, once', async () => {
    const { calls, lifecycle, events } = recording();
    const observer = await start();
    await publish(calls, lifecycle);
    await settled(observer, events);
    await observer.stop();

    const neighbours = await graph.topCoAccessNeighbours({ ...ACME, path: TOKEN, k: 5 });
    const expected = topNeighbours(coreStats(calls).coAccess, TOKEN, 5, settings);
    expect(neighbours.map(({ lastObservedAt: _at, ...n }) => n)).toEqual(
      expected.map((n) => ({ ...n, weight: expect.closeTo(n.weight, 12) as number })),
    );
    const promoted = memories();
    expect(promoted.map((m) => m.memoryType)).toEqual(
      expect.arrayContaining(['prefetch_pattern', 'error_pattern', 'workflow_recipe']),
    );
    expect(promoted.every((m) => m.tenantId === 'acme' && !m.tags.includes('unvalidated'))).toBe(
      true,
    );

    // A restart reprocesses nothing: the offsets, state and outputs committed together.
    const endsBefore = log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories);
    const again = await start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await again.stop();
    expect(again.stage.counters.toolCalls).toBe(0);
    expect(log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories)).toEqual(endsBefore);
    expect(await graph.topCoAccessNeighbours({ ...ACME, path: TOKEN, k: 5 })).toEqual(neighbours);
  });

  it('should ignore the events of ended sessions published again', async () => {
    const { calls, lifecycle, events } = recording();
    const observer = await start();
    await publish(calls, lifecycle);
    await settled(observer, events);
    const memoriesBefore = log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories);
    const stateBefore = log.latestByKey(DEFAULT_OBSERVER_TOPICS.projectState, [0, 1, 2]);
    const neighbours = await graph.topCoAccessNeighbours({ ...ACME, path: TOKEN, k: 5 });

    // The hook's spool sends everything again: same events, same ids.
    await publish(calls, lifecycle);
    await settled(observer, 2 * events);
    await observer.stop();

    expect(observer.stage.counters.duplicates).toBe(events);
    expect(log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories)).toEqual(memoriesBefore);
    expect(log.latestByKey(DEFAULT_OBSERVER_TOPICS.projectState, [0, 1, 2])).toEqual(stateBefore);
    expect(await graph.topCoAccessNeighbours({ ...ACME, path: TOKEN, k: 5 })).toEqual(neighbours);
  });

  it('should record each work unit validated once, and not again when the events come again', async () => {
    const { calls, lifecycle, events } = recording(true);
    const observer = await start();
    await publish(calls, lifecycle);
    await settled(observer, events);
    const outcomes = memories().filter((m) => m.memoryType === 'work_unit_outcome');
    expect(outcomes.map((m) => m.content).sort()).toEqual(
      Array.from(
        { length: SESSIONS },
        (_, i) => `Spec ${i} (spec_${i}): succeeded after 6 steps, edited ${SESSION}, ${TOKEN}`,
      ),
    );
    expect(outcomes.every((m) => m.scope === 'work_unit' && m.workUnitOutcome?.succeeded)).toBe(
      true,
    );
    expect(observer.stage.counters.workUnitOutcomes).toBe(SESSIONS);
    const memoriesBefore = log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories);

    await publish(calls, lifecycle);
    await settled(observer, 2 * events);
    await observer.stop();
    expect(observer.stage.counters.workUnitOutcomes).toBe(SESSIONS);
    expect(log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories)).toEqual(memoriesBefore);
  });

  it('should place absolute paths with projectRootOf and let a synthesiser write the texts, as distributed', async () => {
    // The providers only the distributed wiring took before the one topology (issue #18).
    const { calls, lifecycle, events } = recording();
    const absolute = calls.map((session) =>
      session.map((call) => ({ ...call, filePaths: call.filePaths.map((f) => `/work/api/${f}`) })),
    );
    const requests: string[] = [];
    const synthesiser: Synthesiser = {
      synthesise: (items) => {
        requests.push(...items.map((item) => item.memoryType));
        return Promise.resolve(
          items.map((item) => ({ ...item.draft, content: `In short: ${item.draft.content}` })),
        );
      },
    };
    const roots: string[] = [];
    const observer = await start({
      projectRootOf: (tenantId, projectId) => {
        roots.push(`${tenantId}|${projectId}`);
        return '/work/api';
      },
      synthesiser,
    });
    await publish(absolute, lifecycle);
    await settled(observer, events);
    await observer.stop();

    expect(new Set(roots)).toEqual(new Set([`${ACME.tenantId}|${ACME.projectId}`]));
    // The graph of the relative paths: every absolute path placed under the root.
    const neighbours = await graph.topCoAccessNeighbours({ ...ACME, path: TOKEN, k: 5 });
    const expected = topNeighbours(coreStats(calls).coAccess, TOKEN, 5, settings);
    expect(neighbours.map((n) => n.file)).toEqual(expected.map((n) => n.file));
    expect(neighbours.length).toBeGreaterThan(0);
    const promoted = memories();
    expect(requests.length).toBeGreaterThan(0);
    expect(promoted.length).toBeGreaterThan(0);
    expect(promoted.every((m) => m.content.startsWith('In short: '))).toBe(true);
    expect(promoted.flatMap((m) => m.relatedFiles).every((f) => !f.startsWith('/'))).toBe(true);
  });

  describe('the scheduled work_unit_outcome prune (issue #20, seed 002 §13)', () => {
    /** Every record of the memory's key on the memory topic, tombstones included, in order. */
    async function recordsOf(memoryId: string) {
      const codec = codecOnTopic(
        contractCodec('memory.memories.v1'),
        DEFAULT_OBSERVER_TOPICS.memories,
      );
      const port = new SqliteEventLogAdapter(log);
      const ends = log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories);
      const records = [];
      for (let partition = 0; partition < ends.length; partition += 1) {
        const read = await port.read(codec, partition, 0, ends[partition] + 1, {
          tombstones: true,
        });
        records.push(
          ...read.filter((r) => (isLoggedTombstone(r) ? r.key : r.event.memoryId) === memoryId),
        );
      }
      return records.map((r) => ({
        partition: r.partition,
        offset: r.offset,
        timestamp: null,
        memory: isLoggedTombstone(r) ? null : (r.event as Memory),
      }));
    }
    const outcomes = () => memories().filter((m) => m.memoryType === 'work_unit_outcome');

    it('should prune the outcomes 90 days past their verdict by itself, as the manual prune does, once', async () => {
      const { calls, lifecycle, events } = recording(true);
      // The verdicts are at T0 + i h + 40 s; the clock starts an hour after the last one.
      let now = T0 + 5 * HOUR;
      const observer = await start({ clock: () => now, pruneIntervalMs: 20 });
      await publish(calls, lifecycle);
      await settled(observer, events);
      await until(() => observer.pruning.counters.runs >= 3);
      const written = outcomes();
      expect(written).toHaveLength(SESSIONS);
      expect(observer.pruning.counters.pruned).toBe(0);

      // 90 days after the second verdict: the first two are due, the third is 40 s short of it.
      now = T0 + 90 * DAY + HOUR + 40_000;
      await until(() => observer.pruning.counters.pruned >= 2);
      const runs = observer.pruning.counters.runs;
      await until(() => observer.pruning.counters.runs >= runs + 3);
      const ends = log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories);
      await observer.stop();
      expect(
        outcomes()
          .map((m) => m.content)
          .sort(),
      ).toEqual(
        written
          .filter((m) => /Spec [23]/.test(m.content))
          .map((m) => m.content)
          .sort(),
      );
      const pruned = written.find((m) => m.content.startsWith('Spec 0 '))!;
      const history = memoryHistory(await recordsOf(pruned.memoryId));
      expect(history.map((entry) => entry.reasons.at(-1) ?? '')).toEqual([
        'created (source observer_inferred)',
        'pruned (older-than-90d)',
        'deleted after pruning (older-than-90d)',
      ]);
      expect(history[1].memory).toMatchObject({ staleAt: now, timestamp: now });
      expect(observer.pruning.counters.pruned).toBe(2);

      // A restart, the clock unchanged: nothing is pruned again, nothing is written.
      const again = await start({ clock: () => now, pruneIntervalMs: 20 });
      await until(() => again.pruning.counters.runs >= 3);
      await again.stop();
      expect(again.pruning.counters.pruned).toBe(0);
      expect(log.endOffsets(DEFAULT_OBSERVER_TOPICS.memories)).toEqual(ends);
    });

    it('should prune nothing when the retention is 0', async () => {
      const { calls, lifecycle, events } = recording(true);
      const observer = await start({
        clock: () => T0 + 1_000 * DAY,
        pruneIntervalMs: 20,
        settings: observerSettings({ workUnitOutcomeRetentionDays: 0 }),
      });
      await publish(calls, lifecycle);
      await settled(observer, events);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await observer.stop();
      expect(outcomes()).toHaveLength(SESSIONS);
      expect(observer.pruning.counters.pruned).toBe(0);
    });
  });
});
