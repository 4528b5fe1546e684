import type { Memory, Typed } from '@engram/contracts';
import {
  coAccessEdge,
  observerSettings,
  topNeighbours,
  type ProjectObservationStats,
} from '@engram/core';
import { contractCodec, EventPublisher, type Delivered } from '@engram/kafka';
import {
  createGraphWriterDriver,
  createNeo4jDriver,
  ensureGraphSchema,
  graphNumber,
  Neo4jObserverGraphWriter,
  topCoAccessNeighbours,
  type ObserverGraphBatch,
} from '@engram/neo4j';
import type { Kafka } from 'kafkajs';
import type { Driver } from 'neo4j-driver';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ensureObserverTopics,
  observerCodecs,
  prefixedObserverTopics,
  type RunningObserver,
} from '../../apps/observer/src/observer.topology';
import { ObserverStage, type ObserverTopics } from '../../apps/observer/src/observer.stage';
import {
  bash,
  coreStats,
  edit,
  read,
  sessionCalls,
  sessionEnded,
  sessionStarted,
  T0,
  type CallSpec,
  type Scope,
} from '../../apps/observer/src/testing/observer-events';
import { formatNeighbors, neighborsReport } from '../../apps/engram/src/commands/neighbors.command';
import { CuttableProxy } from './support/cuttable-proxy';
import {
  readAllCommitted,
  testKafka,
  testRegistry,
  withTestPlatform,
} from './support/kafka-fixtures';
import { startTestObserver } from './support/observer-service';
import { eventually, uniqueName } from './support/unique';
import { graphLines as graphSnapshot, plain } from './support/graph-lines';

const PARTITIONS = 3;
const HOUR = 3_600_000;
const SETTINGS = observerSettings();

const TOKEN = 'src/auth/token.ts';
const SESSION = 'src/auth/session.ts';
const POOL = 'src/db/pool.ts';
const SCHEMA = 'src/db/schema.ts';
const LOG = 'src/util/log.ts';

/** Seven sessions on one repository: the auth files are nearly always read together. */
const SESSIONS: CallSpec[][] = [
  [read(TOKEN), read(SESSION), edit(TOKEN), read(POOL), edit(SESSION), bash('npm test')],
  [
    read(TOKEN),
    read(SESSION),
    edit(SESSION),
    bash('npm test', 'FAIL src/auth/token.spec.ts:12 expected 200, got 401'),
    edit(TOKEN),
    bash('npm test'),
  ],
  [read(TOKEN), read(SESSION), read(SCHEMA), edit(SCHEMA)],
  [
    read(POOL),
    read(SCHEMA),
    bash('npm run migrate', 'relation "users" does not exist at 10:41:07'),
    edit(SCHEMA),
    bash('npm run migrate'),
  ],
  [read(TOKEN), edit(LOG), read(LOG)],
  [read(SESSION), read(TOKEN), edit(TOKEN), read(LOG), edit(LOG)],
  [read(POOL), read(SCHEMA), edit(POOL), read(SCHEMA)],
];
/** Left open (no SessionEnded): its facts are in the graph all the same. */
const OPEN_SESSION = 5;

interface Recording {
  sessionIds: string[];
  calls: Typed<'ToolCallObserved'>[][];
  lifecycle: (Typed<'SessionStarted'> | Typed<'SessionEnded'>)[];
  events: number;
}

function recording(scope: Scope, run: string): Recording {
  const sessionIds = SESSIONS.map((_, i) => `${run}-s${i}`);
  const calls = SESSIONS.map((specs, i) =>
    sessionCalls(scope, sessionIds[i], specs, T0 + i * HOUR),
  );
  const lifecycle = sessionIds.flatMap((sessionId, i) => [
    sessionStarted(scope, sessionId, T0 + i * HOUR - 1_000),
    ...(i === OPEN_SESSION ? [] : [sessionEnded(scope, sessionId, T0 + i * HOUR + 60_000)]),
  ]);
  const events = calls.flat().length + lifecycle.length;
  return { sessionIds, calls, lifecycle, events };
}

async function publish(
  kafka: Kafka,
  topics: ObserverTopics,
  calls: Typed<'ToolCallObserved'>[],
  lifecycle: Recording['lifecycle'] = [],
): Promise<void> {
  const publisher = new EventPublisher(kafka, testRegistry());
  const codecs = observerCodecs(topics);
  await publisher.connect();
  try {
    await publisher.publish(codecs.toolCalls, calls);
    await publisher.publish(codecs.lifecycle, lifecycle);
  } finally {
    await publisher.disconnect();
  }
}

/**
 * Every event consumed and committed, every waiting lifecycle event applied, and every
 * project-work record the session stage committed also committed by the project stage.
 */
async function settled(runtime: RunningObserver, events: number, ended: number): Promise<void> {
  const { processor, stage, promotion } = runtime;
  await eventually(
    () =>
      // Committed records of every topic, less the project stage's: the inputs committed.
      processor.counters.processed - promotion.counters.committedWorks >= events &&
      stage.pendingLifecycle === 0 &&
      stage.counters.sessionsEnded >= ended &&
      promotion.counters.committedWorks ===
        stage.counters.projectWorks + runtime.episodeFeed.counters.projectWorks
        ? true
        : undefined,
    { timeoutMs: 90_000, intervalMs: 100 },
  );
}

/** The memories committed to a topic, latest per memoryId (a compacted topic's view). */
async function memoriesOn(topic: string, atLeast: number): Promise<Map<string, Memory>> {
  const registry = testRegistry();
  const codec = contractCodec('memory.memories.v1');
  const messages = await readAllCommitted(testKafka(), topic, atLeast);
  const memories = new Map<string, Memory>();
  for (const message of messages) {
    const memory = codec.fromAvro(await registry.decode(message.value));
    memories.set(memory.memoryId, memory);
  }
  return memories;
}

/** The topics of another deployment on the same inputs: its own internal and output topics. */
function ownInternalTopics(topics: ObserverTopics, suffix: string): ObserverTopics {
  return {
    ...topics,
    changelog: `${topics.changelog}.${suffix}`,
    projectWork: `${topics.projectWork}.${suffix}`,
    projectState: `${topics.projectState}.${suffix}`,
    memories: `${topics.memories}.${suffix}`,
  };
}

/** What a memory says, without the run's placeholders. */
const memoryLine = (memory: Memory, run: string, projectId: string) =>
  JSON.stringify([memory.memoryId, memory.memoryType, memory.content, memory.confidence])
    .replaceAll(run, 'RUN')
    .replaceAll(projectId, 'PROJECT');

/**
 * The memories promoted from the recording: none of its sessions validated, so every one is
 * marked for review; the auth files read together in four sessions are among them.
 */
function expectUnvalidatedAuthMemories(memories: Memory[], sessionIds: string[], scope: Scope) {
  expect(memories.length).toBeGreaterThan(0);
  expect(memories.every((m) => m.needsReview && m.tags.includes('unvalidated'))).toBe(true);
  const auth = memories.filter(
    (m) => m.relatedFiles.includes(TOKEN) && m.relatedFiles.includes(SESSION),
  );
  expect(auth.length).toBeGreaterThan(0);
  for (const memory of memories) {
    expect(memory).toMatchObject({ tenantId: 'acme', projectId: scope.projectId });
    expect(sessionIds).toEqual(expect.arrayContaining(memory.provenanceSessionIds));
  }
  console.log(
    `[observer] memories: ${memories.map((m) => `${m.memoryType}: ${m.content}`).join(' | ')}`,
  );
}

/** The CO_ACCESSED edges of a project, by `fileA|fileB`. */
async function coAccessedEdges(driver: Driver, scope: Scope) {
  const { records } = await driver.executeQuery(
    `MATCH (a:File {tenantId: $tenantId, projectId: $projectId})-[e:CO_ACCESSED]->(b:File)
     RETURN a.path AS a, b.path AS b, properties(e) AS props`,
    scope,
  );
  return new Map(
    records.map((r) => [
      `${r.get('a') as string}|${r.get('b') as string}`,
      plain(r.get('props')) as Record<string, unknown>,
    ]),
  );
}

/** The graph's edges must be the pure core's, pair by pair, value by value. */
async function expectCoreEdges(driver: Driver, scope: Scope, stats: ProjectObservationStats) {
  const edges = await coAccessedEdges(driver, scope);
  const expected = Object.values(stats.coAccess.pairs).map((pair) =>
    coAccessEdge(stats.coAccess, pair.fileA, pair.fileB, SETTINGS)!,
  );
  expect([...edges.keys()].sort()).toEqual(expected.map((e) => `${e.fileA}|${e.fileB}`).sort());
  for (const edge of expected) {
    const stored = edges.get(`${edge.fileA}|${edge.fileB}`)!;
    expect(stored, `${edge.fileA} — ${edge.fileB}`).toMatchObject({
      sessionCount: edge.sessionCount,
      rawCount: edge.rawCount,
      directional: edge.directional,
      direction: edge.direction,
      lastObservedAt: edge.lastObservedAt,
    });
    expect(stored.weight).toBeCloseTo(edge.weight, 12);
    expect(stored.avgTimeDeltaMs).toBeCloseTo(edge.avgTimeDeltaMs, 9);
  }
  return edges;
}

describe('observer service on real Kafka, Schema Registry and Neo4j', () => {
  const infra = inject('infra');
  const kafka = testKafka();
  const driver = createNeo4jDriver({ url: infra.neo4jUrl });
  const scope: Scope = { tenantId: 'acme', projectId: uniqueName('acme/observer') };
  const run = uniqueName('obs');
  const prefix = `${run}.`;
  const topics = prefixedObserverTopics(prefix);
  const recorded = recording(scope, run);
  const stats = coreStats(recorded.calls);
  const ended = SESSIONS.length - 1;
  let firstRun: string[] = [];
  let deadLettered = -1;

  const start = (
    groupId: string,
    overrides: Partial<Parameters<typeof startTestObserver>[0]> = {},
  ) =>
    startTestObserver({
      settings: SETTINGS,
      topics,
      groupId,
      partitions: PARTITIONS,
      retry: { initialMs: 100, maxMs: 1_000 },
      sweepIntervalMs: 300,
      graphRetryWithinMs: 500,
      ...overrides,
    });

  beforeAll(async () => {
    await withTestPlatform((platform) => ensureObserverTopics(platform, topics, PARTITIONS));
    await publish(kafka, topics, recorded.calls.flat(), recorded.lifecycle);
    const began = performance.now();
    const runtime = await start(`${prefix}observer`);
    try {
      await settled(runtime, recorded.events, ended);
      const seconds = (performance.now() - began) / 1000;
      console.log(
        `[observer] ${recorded.events} events → graph in ${seconds.toFixed(2)} s incl. group join; ` +
          `stage ${JSON.stringify(runtime.stage.counters)}; writer ${JSON.stringify(runtime.writer.counters)}`,
      );
      deadLettered = runtime.processor.counters.deadLettered;
      console.log(`[observer] promotion ${JSON.stringify(runtime.promotion.counters)}`);
    } finally {
      await runtime.stop();
    }
    firstRun = await graphSnapshot(driver, scope, run);
  });

  afterAll(async () => {
    await driver.close();
  });

  it('should store CO_ACCESSED edges whose weights and raw counts are the core’s', async () => {
    expect(deadLettered).toBe(0);
    const edges = await expectCoreEdges(driver, scope, stats);
    // By hand: token.ts and session.ts co-accessed in sessions 0, 1, 2 and 5; token.ts touched
    // in 0, 1, 2, 4, 5, session.ts in 0, 1, 2, 5 → 4 / (5 + 4 − 4) = 0.8.
    expect(edges.get(`${SESSION}|${TOKEN}`)).toMatchObject({ sessionCount: 4, weight: 0.8 });
  });

  it('should answer topNeighbours from Neo4j as the core ranks them', async () => {
    const neighbours = await topCoAccessNeighbours(driver, { ...scope, path: TOKEN, k: 3 });
    const expected = topNeighbours(stats.coAccess, TOKEN, 3, SETTINGS);
    expect(neighbours.map(({ lastObservedAt: _at, ...n }) => n)).toEqual(
      expected.map((n) => ({ ...n, weight: expect.closeTo(n.weight, 12) as number })),
    );
    expect(neighbours[0]).toMatchObject({ file: SESSION, rawCount: expect.any(Number) as number });
  });

  it('should answer `engram neighbors` (distributed) from the graph, the tenant found by project', async () => {
    const graph = new Neo4jObserverGraphWriter(driver, SETTINGS);
    const report = await neighborsReport(graph, {
      project: scope.projectId,
      file: `./${TOKEN}`,
      k: 2,
    });
    const expected = topNeighbours(stats.coAccess, TOKEN, 2, SETTINGS);
    expect(report).toMatchObject({ project: scope.projectId, tenant: 'acme', file: TOKEN, k: 2 });
    expect(report.neighbors.map((n) => [n.file, n.rawCount, n.direction])).toEqual(
      expected.map((n) => [n.file, n.rawCount, n.direction]),
    );
    expect(formatNeighbors(report)).toMatch(
      new RegExp(
        `1\\. ${SESSION.replace(/\./g, '\\.')}  score \\d\\.\\d\\d  co_access  weight 0\\.80`,
      ),
    );
    const unknown = await neighborsReport(graph, {
      project: uniqueName('nope'),
      file: TOKEN,
      k: 5,
    });
    expect(unknown).toMatchObject({ tenant: null, neighbors: [] });
  });

  it('should record sessions, touches and error patterns with their hits', async () => {
    const { records } = await driver.executeQuery(
      `MATCH (s:Session {projectId: $projectId})
       RETURN s.id AS id, s.endedAt AS endedAt, s.toolCalls AS toolCalls,
              COUNT { (s)-[:TOUCHED]->() } AS files, COUNT { (s)-[:IN_PROJECT]->(:Project) } AS projects
       ORDER BY id`,
      scope,
    );
    expect(records.map((r) => plain(r.toObject()))).toEqual(
      recorded.sessionIds.map((id, i) => ({
        id,
        endedAt: i === OPEN_SESSION ? null : T0 + i * HOUR + 60_000,
        toolCalls: SESSIONS[i].length,
        files: new Set(SESSIONS[i].flatMap((spec) => spec.files ?? [])).size,
        projects: 1,
      })),
    );
    const errors = await driver.executeQuery(
      `MATCH (e:ErrorPattern {tenantId: $tenantId, projectId: $projectId})<-[h:HIT]-(s:Session)
       RETURN e.toolName AS tool, e.normalisedError AS error, e.sessionCount AS sessions,
              h.resolvedEpisodes AS resolved ORDER BY error`,
      scope,
    );
    expect(errors.records.map((r) => plain(r.toObject()))).toEqual([
      {
        tool: 'Bash',
        error: expect.stringContaining('expected <n>, got <n>') as string,
        sessions: 1,
        resolved: 1,
      },
      {
        tool: 'Bash',
        error: expect.stringContaining('does not exist') as string,
        sessions: 1,
        resolved: 1,
      },
    ]);
  });

  it('should leave the graph unchanged when the topics are replayed from offset 0', async () => {
    expect(firstRun.length).toBeGreaterThan(30);
    // A new deployment: a new consumer group with its own internal topics (like a Kafka Streams
    // application id), so every fact and statistic is recomputed from the inputs.
    const replay = await start(`${prefix}replay`, { topics: ownInternalTopics(topics, 'replay') });
    try {
      await settled(replay, recorded.events, ended);
    } finally {
      await replay.stop();
    }
    expect(await graphSnapshot(driver, scope, run)).toEqual(firstRun);
  });

  it('should promote the same memories when a deployment replays the same order of events', async () => {
    // Promotion reads the project's statistics at the moment a session ends, so across
    // partitions it depends on how the partitions interleave. On one partition the order is the
    // log's, and two deployments must promote exactly the same memories.
    const oneRun = uniqueName('obs-one');
    const oneScope: Scope = { tenantId: 'acme', projectId: uniqueName('acme/one') };
    const oneTopics = prefixedObserverTopics(`${oneRun}.`);
    const one = recording(oneScope, oneRun);
    await withTestPlatform((platform) => ensureObserverTopics(platform, oneTopics, 1));
    await publish(kafka, oneTopics, one.calls.flat(), one.lifecycle);
    const lines: string[][] = [];
    for (const name of ['first', 'second']) {
      const topicsOfRun = name === 'first' ? oneTopics : ownInternalTopics(oneTopics, name);
      const runtime = await start(`${oneRun}.${name}`, { topics: topicsOfRun, partitions: 1 });
      try {
        await settled(runtime, one.events, ended);
      } finally {
        await runtime.stop();
      }
      const count = runtime.promotion.counters.committedMemories;
      const memories = [...(await memoriesOn(topicsOfRun.memories, count)).values()];
      if (name === 'first') expectUnvalidatedAuthMemories(memories, one.sessionIds, oneScope);
      lines.push(memories.map((m) => memoryLine(m, oneRun, oneScope.projectId)));
    }
    expect(lines[1].sort()).toEqual(lines[0].sort());
  });

  it('should leave the graph unchanged when a new group replays against the same changelog', async () => {
    // The session changelog knows every event already: the replayed calls are duplicates, so
    // the new group's project stage (own internal topics) has nothing to promote.
    const replay = await start(`${prefix}replay-same-changelog`, {
      topics: { ...ownInternalTopics(topics, 'same'), changelog: topics.changelog },
    });
    try {
      await settled(replay, recorded.events, 0);
    } finally {
      await replay.stop();
    }
    expect(await graphSnapshot(driver, scope, run)).toEqual(firstRun);
  });

  it('should pause through a Neo4j outage, commit nothing past the failed write, and lose nothing', async () => {
    const outageRun = uniqueName('obs-outage');
    const outageScope: Scope = { tenantId: 'acme', projectId: uniqueName('acme/outage') };
    const outageTopics = prefixedObserverTopics(`${outageRun}.`);
    const outage = recording(outageScope, outageRun);
    const groupId = `${outageRun}.observer`;
    const proxy = CuttableProxy.forUrl(infra.neo4jUrl, 7687);
    await proxy.open();
    await withTestPlatform((platform) => ensureObserverTopics(platform, outageTopics, PARTITIONS));
    const runtime = await start(groupId, {
      topics: outageTopics,
      neo4jUrl: `bolt://127.0.0.1:${proxy.port}`,
    });
    const admin = kafka.admin();
    await admin.connect();
    const committed = async (topic: string) => {
      const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return entry.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    };
    try {
      const before = outage.calls.slice(0, 3).flat();
      await publish(kafka, outageTopics, before);
      await settled(runtime, before.length, 0);
      await proxy.cut();
      await publish(kafka, outageTopics, outage.calls.slice(3).flat(), outage.lifecycle);
      await eventually(() => (runtime.processor.counters.retries >= 3 ? true : undefined), {
        timeoutMs: 60_000,
      });
      // Down: nothing past the failed writes committed, and the graph has only the first part.
      expect(await committed(outageTopics.toolCalls)).toBe(before.length);
      expect(await committed(outageTopics.lifecycle)).toBe(0);
      const { records } = await driver.executeQuery(
        'MATCH (s:Session {projectId: $projectId}) RETURN count(s) AS sessions',
        outageScope,
      );
      expect(graphNumber(records[0].get('sessions'))).toBe(3);

      await proxy.open();
      await settled(runtime, outage.events, ended);
      await eventually(async () =>
        (await committed(outageTopics.toolCalls)) === outage.calls.flat().length ? true : undefined,
      );
      expect(runtime.processor.counters.deadLettered).toBe(0);
      console.log(
        `[observer] outage: ${runtime.processor.counters.retries} retries, writer ${JSON.stringify(runtime.writer.counters)}`,
      );
    } finally {
      await admin.disconnect();
      await runtime.stop();
      await proxy.cut();
    }
    // Exactly the graph of the uninterrupted run (placeholders for run and project).
    await expectCoreEdges(driver, outageScope, stats);
    expect(await graphSnapshot(driver, outageScope, outageRun)).toEqual(firstRun);
  });
});

describe('observer graph writer on Neo4j', () => {
  const infra = inject('infra');
  const driver = createGraphWriterDriver({ url: infra.neo4jUrl });
  const writer = new Neo4jObserverGraphWriter(driver, SETTINGS);

  afterAll(async () => {
    await driver.close();
  });

  /** Each session's graph batches, one tool call per batch, as the stage would write them. */
  async function batchesPerSession(scope: Scope, run: string): Promise<ObserverGraphBatch[][]> {
    const captured: ObserverGraphBatch[] = [];
    const stage = new ObserverStage(prefixedObserverTopics(run), {
      settings: SETTINGS,
      restore: () => Promise.resolve(new Map()),
      writer: { write: (batch) => Promise.resolve(void captured.push(batch)) },
      positions: {
        endOffset: () => Promise.resolve(0),
        committedOffsets: () => Promise.resolve(new Map()),
      },
      redact: (text) => text,
    });
    const perSession: ObserverGraphBatch[][] = [];
    for (const calls of recording(scope, run).calls) {
      const from = captured.length;
      for (const [i, call] of calls.entries()) {
        const item: Delivered<Typed<'ToolCallObserved'>> = {
          event: call,
          topic: 'tool-calls',
          partition: 0,
          offset: String(i),
          key: null,
          headers: {},
        };
        await stage.toolCallStage.transform([item]);
        stage.committed();
      }
      perSession.push(captured.slice(from));
    }
    return perSession;
  }

  it('should give the core’s weights when sessions write concurrently, and the same graph when written again', async () => {
    await ensureGraphSchema(driver);
    const run = uniqueName('obs-writer');
    const scope: Scope = { tenantId: 'acme', projectId: uniqueName('acme/writer') };
    const perSession = await batchesPerSession(scope, run);
    const writeAll = (sessions: ObserverGraphBatch[][]) =>
      Promise.all(
        sessions.map(async (batches) => {
          for (const batch of batches) await writer.write(batch);
        }),
      );
    const began = performance.now();
    await writeAll(perSession);
    const seconds = (performance.now() - began) / 1000;
    const batches = perSession.flat().length;
    console.log(
      `[observer] ${batches} batches from ${perSession.length} concurrent sessions in ${seconds.toFixed(2)} s`,
    );
    await expectCoreEdges(driver, scope, coreStats(recording(scope, run).calls));
    const once = await graphSnapshot(driver, scope, run);

    await writeAll([...perSession].reverse());
    expect(await graphSnapshot(driver, scope, run)).toEqual(once);
  });
});
