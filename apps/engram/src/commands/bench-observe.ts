import type { Typed } from '@engram/contracts';
import {
  emptyProjectStats,
  foldSignal,
  observerSettings,
  SessionSignalDetector,
  type ObserverGraphBatch,
  type ObserverGraphWriter,
} from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import type { Delivered } from '@engram/kafka';
import {
  createGraphWriterDriver,
  ensureGraphSchema,
  Neo4jObserverGraphWriter,
} from '@engram/neo4j';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Driver } from 'neo4j-driver';

/** The project the bench's synthetic sessions work on (and its clean-up deletes). */
const BENCH_PROJECT = 'bench/repo';
/** The project of the untimed warm-up pass (its own sessions too: a Session node is one id). */
const WARMUP_PROJECT = 'bench/warm-up';
/** Sessions of the warm-up pass: enough rows for Neo4j to plan and JIT-compile every statement. */
const WARMUP_SESSIONS = 400;
import { prefixedObserverTopics, ObserverStage } from '@engram/app-observer';

/** What `engram bench observe --json` prints (one JSON object). */
export interface ObserveBench {
  benchmark: 'observe';
  graph: 'embedded' | 'distributed';
  sessions: number;
  toolCalls: number;
  core: { seconds: number; callsPerSecond: number; signalsPerSecond: number; signals: number };
  graphWrites: {
    /** Tool calls per observer transaction (and so per graph batch). */
    batchCalls: number;
    batches: number;
    /** Timed passes over the same batches, each on an empty graph; `seconds` is their median. */
    passes: number;
    seconds: number;
    /** Per-session co-access pair rows upserted (each recomputes its CO_ACCESSED edge). */
    coAccessUpdates: number;
    coAccessUpdatesPerSecond: number;
    rowsPerSecond: number;
  };
  cores: number;
  /** The machine's 1, 5 and 15 min load averages when the graph writes began (shared machines). */
  loadAverage: number[];
}

const FILES_PER_MODULE = 20;
const MODULES = 10;
const CALLS_PER_SESSION = 40;

/** A small deterministic PRNG (mulberry32): the same sessions on every run. */
export function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Sessions of one repository as agents work: each stays mostly in one module (reads, edits, a
 * test run now and then, sometimes failing), so files recur together — the co-access the
 * observer exists to find — with some calls elsewhere.
 */
export function syntheticToolCalls(
  sessions: number,
  projectId = BENCH_PROJECT,
): Typed<'ToolCallObserved'>[][] {
  const next = random(42);
  const start = Date.UTC(2026, 10, 1);
  const file = (module: number) =>
    `src/module-${module}/file-${Math.floor(next() * FILES_PER_MODULE)}.ts`;
  return Array.from({ length: sessions }, (_, s) => {
    const home = s % MODULES;
    const sessionId = `${projectId}#${s}`;
    return Array.from({ length: CALLS_PER_SESSION }, (_, step) => {
      const roll = next();
      const module = next() < 0.85 ? home : Math.floor(next() * MODULES);
      const bash = roll > 0.9;
      const failed = bash && next() < 0.4;
      return {
        type: 'ToolCallObserved' as const,
        eventId: `${sessionId}:${step}`,
        tenantId: 'bench',
        projectId,
        sessionId,
        agentId: 'bench-agent',
        userId: null,
        timestamp: start + s * 3_600_000 + step * 2_000,
        schemaVersion: 1,
        promptId: 1 + Math.floor(step / 8),
        stepIndex: step,
        toolName: bash ? 'Bash' : roll < 0.6 ? 'Read' : 'Edit',
        filePaths: bash ? [] : [file(module)],
        command: bash ? 'npm test' : null,
        argsJson: '{}',
        outcome: failed ? ('error' as const) : ('ok' as const),
        errorMessage: failed ? `FAIL src/module-${module}/spec.ts:${step} expected 1, got 2` : null,
        durationMs: 40,
        tokensUsed: 300,
        mcp: false,
      };
    });
  });
}

/** Calls/s and signals/s of the pure core: detector per session, statistics per project. */
function benchCore(sessions: Typed<'ToolCallObserved'>[][]) {
  const settings = observerSettings();
  const run = () => {
    const stats = emptyProjectStats();
    let signals = 0;
    const started = process.hrtime.bigint();
    for (const calls of sessions) {
      const detector = SessionSignalDetector.start(calls[0], null, settings);
      for (const call of calls) {
        for (const signal of detector.observe(call).signals) {
          foldSignal(stats, signal);
          signals += 1;
        }
      }
      for (const signal of detector.finish()) foldSignal(stats, signal);
    }
    return { seconds: Number(process.hrtime.bigint() - started) / 1e9, signals };
  };
  run();
  const passes = [run(), run(), run()].sort((a, b) => a.seconds - b.seconds);
  return passes[1];
}

/**
 * The graph batches the observer stage writes, `batchCalls` tool calls per transaction, the
 * sessions' calls interleaved as partitions deliver them.
 */
export async function graphBatches(sessions: Typed<'ToolCallObserved'>[][], batchCalls: number) {
  const batches: ObserverGraphBatch[] = [];
  const capture: ObserverGraphWriter = {
    write: (batch) => Promise.resolve(void batches.push(batch)),
  };
  const stage = new ObserverStage(prefixedObserverTopics('bench.'), {
    settings: observerSettings(),
    restore: () => Promise.resolve(new Map()),
    writer: capture,
    positions: {
      endOffset: () => Promise.resolve(0),
      committedOffsets: (partitions) => Promise.resolve(new Map(partitions.map((p) => [p, 0]))),
    },
    redact: (text) => text,
  });
  const interleaved = sessions.flatMap((calls, s) =>
    calls.map((call, i) => ({ call, order: i * sessions.length + s })),
  );
  interleaved.sort((a, b) => a.order - b.order);
  for (let i = 0; i < interleaved.length; i += batchCalls) {
    const items: Delivered<Typed<'ToolCallObserved'>>[] = interleaved
      .slice(i, i + batchCalls)
      .map(({ call }, j) => ({
        event: call,
        topic: 'bench',
        partition: 0,
        offset: String(i + j),
        key: null,
        headers: {},
      }));
    await stage.toolCallStage.transform(items);
    stage.committed();
  }
  return batches;
}

/**
 * The bench's own project: what an earlier run left goes, so every run writes afresh. In chunks
 * (an auto-commit transaction): a big run's ~100k edges deleted in one transaction pass Neo4j's
 * transaction memory limit, and every later run would fail on the clean-up.
 */
export async function clearBenchProject(driver: Driver, projectId = BENCH_PROJECT): Promise<void> {
  const session = driver.session();
  try {
    await session.run(
      `MATCH (n {projectId: $projectId})
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 200 ROWS`,
      { projectId },
    );
  } finally {
    await session.close();
  }
}

const rowsOf = (batch: ObserverGraphBatch) =>
  batch.sessions.length + batch.touches.length + batch.sessionPairs.length + batch.errors.length;

/**
 * `engram bench observe`: the core's signals/s, then co-access updates/s into the graph (SQLite
 * embedded, or Neo4j with --distributed) with the observer's own batches.
 */
export async function benchObserve(options: {
  sessions: number;
  batchCalls: number;
  distributed: boolean;
  neo4jUrl: string;
}): Promise<ObserveBench> {
  const sessions = syntheticToolCalls(options.sessions);
  const toolCalls = sessions.length * CALLS_PER_SESSION;
  const core = benchCore(sessions);
  const batches = await graphBatches(sessions, options.batchCalls);
  let loadAverage: number[] = [];
  const write = async (writer: ObserverGraphWriter) => {
    loadAverage = loadavg().map((load) => Number(load.toFixed(2)));
    const started = process.hrtime.bigint();
    for (const batch of batches) await writer.write(batch);
    return Number(process.hrtime.bigint() - started) / 1e9;
  };
  let seconds: number;
  let passCount = 1;
  if (options.distributed) {
    const driver = createGraphWriterDriver({ url: options.neo4jUrl });
    try {
      await ensureGraphSchema(driver);
      const writer = new Neo4jObserverGraphWriter(driver, observerSettings());
      // Untimed: a fresh server's first batches measure query planning and the JIT, not writes.
      const warmUp = await graphBatches(
        syntheticToolCalls(WARMUP_SESSIONS, WARMUP_PROJECT),
        options.batchCalls,
      );
      for (const batch of warmUp) await writer.write(batch);
      await clearBenchProject(driver, WARMUP_PROJECT);
      // The median of three passes, each on an empty project: one pass swings ±20 % with
      // what else the two cores run.
      const passes: number[] = [];
      for (let pass = 0; pass < 3; pass += 1) {
        await clearBenchProject(driver);
        passes.push(await write(writer));
      }
      seconds = passes.sort((a, b) => a - b)[1];
      passCount = passes.length;
    } finally {
      await driver.close();
    }
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'engram-bench-observe-'));
    const graph = SqliteObserverGraph.open({ dataDir: dir, rule: observerSettings() });
    try {
      seconds = await write(graph);
    } finally {
      graph.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const coAccessUpdates = batches.reduce((sum, b) => sum + b.sessionPairs.length, 0);
  const rows = batches.reduce((sum, b) => sum + rowsOf(b), 0);
  return {
    benchmark: 'observe',
    graph: options.distributed ? 'distributed' : 'embedded',
    sessions: sessions.length,
    toolCalls,
    core: {
      seconds: Number(core.seconds.toFixed(3)),
      callsPerSecond: Math.round(toolCalls / core.seconds),
      signalsPerSecond: Math.round(core.signals / core.seconds),
      signals: core.signals,
    },
    graphWrites: {
      batchCalls: options.batchCalls,
      batches: batches.length,
      passes: passCount,
      seconds: Number(seconds.toFixed(3)),
      coAccessUpdates,
      coAccessUpdatesPerSecond: Math.round(coAccessUpdates / seconds),
      rowsPerSecond: Math.round(rows / seconds),
    },
    cores: cpus().length,
    loadAverage,
  };
}

export function formatObserveBench(result: ObserveBench): string {
  const { core, graphWrites: g } = result;
  return (
    `observe core: ${core.callsPerSecond.toLocaleString('en')} tool calls/s, ` +
    `${core.signalsPerSecond.toLocaleString('en')} signals/s (${result.toolCalls} calls, ${result.sessions} sessions)\n` +
    `graph (${result.graph}): ${g.coAccessUpdatesPerSecond.toLocaleString('en')} co-access updates/s, ` +
    `${g.rowsPerSecond.toLocaleString('en')} rows/s (${g.coAccessUpdates} updates in ${g.batches} batches of ` +
    `${g.batchCalls} tool calls, ${g.seconds} s${g.passes > 1 ? `, median of ${g.passes} passes` : ''}, ${result.cores} cores, load ${result.loadAverage.join(' ')}; ` +
    `target ≥ 20,000 co-access updates/s)`
  );
}
