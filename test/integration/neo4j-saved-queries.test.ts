import {
  emptyGraphBatch,
  observerSettings,
  propagateImpact,
  type GraphErrorRow,
  type GraphScope,
  type ObserverGraphBatch,
} from '@engram/core';
import {
  createGraphWriterDriver,
  ensureGraphSchema,
  Neo4jObserverGraphWriter,
} from '@engram/neo4j';
import neo4j, { type Driver } from 'neo4j-driver';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  CONTRACT_FILES,
  contractGraphBatches,
  pair,
  sessionBatch,
} from '../../libs/core/src/ports/testing/observer-graph.contract';
import { uniqueName } from './support/unique';

// Every saved query of deploy/neo4j/queries runs against a small graph written by the observer's
// own writer, so a change of the graph's labels or properties that breaks one fails here.
const QUERIES = join(__dirname, '..', '..', 'deploy', 'neo4j', 'queries');
const { A, B, C } = CONTRACT_FILES;
const T0 = Date.UTC(2026, 2, 2, 9);

function savedQuery(name: string): string {
  return readFileSync(join(QUERIES, name), 'utf8')
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
}

function errorRow(
  scope: GraphScope,
  sessionId: string,
  hash: string,
  over: Partial<GraphErrorRow>,
) {
  return {
    ...scope,
    sessionId,
    hash,
    toolName: 'Bash',
    normalisedError: `npm ERR! ${hash} <path>`,
    sampleMessage: 'npm ERR! …',
    occurrences: 1,
    episodes: 1,
    resolvedEpisodes: 0,
    lastResolution: 'unresolved',
    lastSeenAt: T0,
    ...over,
  } satisfies GraphErrorRow;
}

/** The contract's three sessions, a bootstrap commit (agent git) of A and C, and two errors. */
function graph(scope: GraphScope, run: string): ObserverGraphBatch[] {
  const [s1, s2, s3] = contractGraphBatches(scope, run);
  const commit = `commit:${'a'.repeat(40)}@${scope.tenantId}/${scope.projectId}`;
  const at = T0 - 86_400_000;
  const commitBatch: ObserverGraphBatch = {
    ...emptyGraphBatch(),
    sessions: [
      {
        ...scope,
        sessionId: commit,
        agentId: 'git',
        startedAt: at,
        lastActivityAt: at,
        endedAt: at,
        toolCalls: 0,
      },
    ],
    touches: [A, C].map((path) => ({
      ...scope,
      sessionId: commit,
      path,
      module: 'src',
      reads: 0,
      edits: 1,
      accesses: 1,
      firstAt: at,
      lastAt: at,
    })),
    sessionPairs: [
      {
        ...scope,
        sessionId: commit,
        fileA: C,
        fileB: A,
        rawCount: 1,
        timeDeltaSumMs: 0,
        timedCount: 0,
        aThenB: 0,
        bThenA: 0,
        sameStep: 1,
        lastObservedAt: at,
      },
    ],
    newlyTouchedFiles: [A, C].map((path) => ({ ...scope, path })),
  };
  s1.errors.push(
    errorRow(scope, `${run}-s1`, 'h1', {
      occurrences: 2,
      resolvedEpisodes: 1,
      lastResolution: 'ran npm ci',
      lastSeenAt: T0 + 10,
    }),
  );
  s2.errors.push(errorRow(scope, `${run}-s2`, 'h1', { lastSeenAt: T0 + 3_600_010 }));
  s3.errors.push(errorRow(scope, `${run}-s3`, 'h2', { occurrences: 5 }));
  return [s1, s2, s3, commitBatch];
}

/**
 * A project for the impact radius, where impact has to travel: sessions of two files each, so
 * P–Q 2/4 = 0.5, P–S 1/4, Q–R 1/5, S–R 1/4, R–T 1/3 (sessions with both / with either).
 */
const [P, Q, R, S, T] = ['src/p.ts', 'src/q.ts', 'src/r.ts', 'src/s.ts', 'src/t.ts'];
const IMPACT_SESSIONS = [
  [P, Q],
  [P, Q],
  [Q, R],
  [P, S],
  [S, R],
  [R, T],
];

function impactGraph(scope: GraphScope, run: string): ObserverGraphBatch[] {
  return IMPACT_SESSIONS.map((files, i) => {
    const sessionId = `${run}-x${i + 1}`;
    const at = T0 + i * 3_600_000;
    const [fileA, fileB] = [...files].sort();
    return sessionBatch(scope, sessionId, at, files, [
      pair(scope, sessionId, fileA, fileB, { raw: 1, aThenB: 1, bThenA: 0, at }),
    ]);
  });
}

describe('deploy/neo4j saved queries on the observer graph', () => {
  let writerDriver: Driver;
  let reader: Driver;
  let store: Neo4jObserverGraphWriter;
  let scope: GraphScope;
  let impactScope: GraphScope;
  const run = (name: string, params: Record<string, unknown>) =>
    reader
      .executeQuery(savedQuery(name), params)
      .then((r) => r.records.map((x) => x.toObject() as Record<string, unknown>));

  beforeAll(async () => {
    const url = inject('infra').neo4jUrl;
    writerDriver = createGraphWriterDriver({ url });
    reader = neo4j.driver(url, undefined, { disableLosslessIntegers: true });
    await ensureGraphSchema(writerDriver);
    store = new Neo4jObserverGraphWriter(writerDriver, observerSettings());
    scope = { tenantId: 'acme', projectId: uniqueName('acme/saved-queries') };
    for (const batch of graph(scope, scope.projectId)) await store.write(batch);
    impactScope = { tenantId: 'acme', projectId: uniqueName('acme/impact-radius') };
    for (const batch of impactGraph(impactScope, impactScope.projectId)) await store.write(batch);
  });
  afterAll(async () => {
    await writerDriver?.close();
    await reader?.close();
  });

  it('should have a test for every saved query', () => {
    expect(readdirSync(QUERIES).sort()).toEqual([
      'co-access-neighbourhood.cypher',
      'episode-chain.cypher',
      'files-of-episode.cypher',
      'hot-files.cypher',
      'impact-radius.cypher',
      'recurring-error-patterns.cypher',
    ]);
  });

  it('co-access-neighbourhood: the neighbours `engram neighbors` reads, in its order', async () => {
    const rows = await run('co-access-neighbourhood.cypher', { ...scope, path: A, k: 5 });
    const expected = await store.topCoAccessNeighbours({ ...scope, path: A, k: 5 });
    expect(rows.map((r) => [r.file, r.weight, r.rawCount, r.sessions, r.direction])).toEqual(
      expected.map((n) => [n.file, n.weight, n.rawCount, n.sessionCount, n.direction]),
    );
    // A in 4 sessions (s1, s2, s3, the commit): B with A in 2 of 4, C with A in 2 of 4 (C in
    // s2 and the commit); the tie goes to the larger raw count (B: 4 observations, C: 2).
    expect(rows.map((r) => [r.file, r.weight, r.rawCount])).toEqual([
      [B, 2 / 4, 4],
      [C, 2 / 4, 2],
    ]);
    expect(rows.find((r) => r.file === B)).toMatchObject({ direction: 'incoming', rawCount: 4 });
    expect(await run('co-access-neighbourhood.cypher', { ...scope, path: A, k: 1 })).toHaveLength(
      1,
    );
  });

  it("files-of-episode: a session's files in order, narrowed by the episode's span", async () => {
    const session = `${scope.projectId}-s2`;
    const all = await run('files-of-episode.cypher', { sessionId: session, from: null, to: null });
    expect(all.map((r) => r.file)).toEqual([B, A, C]);
    expect(all[0]).toMatchObject({ reads: 1, edits: 0, accesses: 1, firstAt: T0 + 3_600_000 });
    const inSpan = { sessionId: session, from: T0 + 3_000_000, to: T0 + 3_700_000 };
    expect(await run('files-of-episode.cypher', inSpan)).toHaveLength(3);
    const after = { sessionId: session, from: T0 + 3_600_001, to: null };
    expect(await run('files-of-episode.cypher', after)).toEqual([]);
  });

  it('recurring-error-patterns: errors of 2+ sessions with the share resolved and the fixes', async () => {
    const rows = await run('recurring-error-patterns.cypher', { ...scope, minSessions: 2 });
    expect(rows).toEqual([
      expect.objectContaining({
        hash: 'h1',
        toolName: 'Bash',
        error: 'npm ERR! h1 <path>',
        sessions: 2,
        occurrences: 3,
        resolvedShare: 0.5,
        resolutions: ['ran npm ci'],
        lastSeenAt: T0 + 3_600_010,
      }),
    ]);
    const once = await run('recurring-error-patterns.cypher', { ...scope, minSessions: 1 });
    expect(once.map((r) => r.hash)).toEqual(['h1', 'h2']);
  });

  it('hot-files: files by sessions touching them, with or without bootstrap commits', async () => {
    const withCommits = await run('hot-files.cypher', { ...scope, includeCommits: true, k: 10 });
    expect(withCommits.map((r) => [r.file, r.sessions])).toEqual([
      [A, 4],
      [B, 2],
      [C, 2],
    ]);
    expect(withCommits[0]).toMatchObject({ edits: 1, reads: 3, accesses: 4 });
    const agentsOnly = await run('hot-files.cypher', { ...scope, includeCommits: false, k: 2 });
    expect(agentsOnly.map((r) => [r.file, r.sessions])).toEqual([
      [A, 3],
      [B, 2],
    ]);
  });

  it('impact-radius: files by fewest hops, heaviest path, cut below the minimum weight', async () => {
    const impact = (path: string, maxDepth: number, minWeight: number) =>
      run('impact-radius.cypher', { ...impactScope, path, maxDepth, minWeight });
    const rows = await impact(P, 3, 0.05);
    // R: two hops either way; through Q (0.5 × 0.2) outweighs through S (0.25 × 0.25).
    // T: three hops, 0.1 × 1/3 < 0.05: cut.
    expect(rows.map((r) => [r.file, r.depth, r.via])).toEqual([
      [Q, 1, [P, Q]],
      [S, 1, [P, S]],
      [R, 2, [P, Q, R]],
    ]);
    expect(rows.map((r) => r.weight as number)).toEqual([0.5, 0.25, 0.5 * 0.2]);
    expect((await impact(P, 3, 0.01)).map((r) => [r.file, r.depth])).toContainEqual([T, 3]);
    expect((await impact(P, 2, 0.01)).map((r) => r.file)).toEqual([Q, S, R]);
    expect(await impact('src/unknown.ts', 3, 0.01)).toEqual([]);

    // The same files, depths and weights as AnalyzeImpact's walk (libs/core) over the edges the
    // observer's reader returns.
    const edges = [];
    for (const from of [P, Q, R, S, T]) {
      const neighbours = await store.topCoAccessNeighbours({ ...impactScope, path: from, k: 10 });
      edges.push(...neighbours.map((n) => ({ from, to: n.file, weight: n.weight })));
    }
    for (const [start, depth, minWeight] of [
      [P, 3, 0.01],
      [S, 2, 0.1],
      [T, 5, 0.01],
    ] as const) {
      const core = propagateImpact(start, edges, depth, minWeight);
      const rowsOf = await impact(start, depth, minWeight);
      expect(rowsOf.map((r) => [r.file, r.depth])).toEqual(core.map((f) => [f.path, f.depth]));
      rowsOf.forEach((r, i) => expect(r.weight).toBeCloseTo(core[i].weight, 12));
    }
  });

  it('episode-chain: per episode, root first, its files, those new to the chain and the rest', async () => {
    const session = (n: number) => `${scope.projectId}-s${n}`;
    const chain = [
      { episodeId: 'e1', sessionId: session(1), startedAt: T0 - 1_000, endedAt: T0 + 60_000 },
      {
        episodeId: 'e2',
        sessionId: session(2),
        startedAt: T0 + 3_500_000,
        endedAt: T0 + 3_700_000,
      },
      { episodeId: 'e3', sessionId: session(3), startedAt: T0 + 7_100_000, endedAt: 0 },
      // e3 still open (0, as GetEpisodeChain says); e4 later in session 3, after its only touch.
      { episodeId: 'e4', sessionId: session(3), startedAt: T0 + 7_300_000, endedAt: null },
    ];
    const rows = await run('episode-chain.cypher', { chain });
    expect(
      rows.map((r) => [r.step, r.episodeId, r.sessionId, r.files, r.newFiles, r.revisited]),
    ).toEqual([
      [1, 'e1', session(1), [B, A], [B, A], []],
      [2, 'e2', session(2), [B, A, C], [C], [B, A]],
      [3, 'e3', session(3), [A], [], [A]],
      [4, 'e4', session(3), [], [], []],
    ]);
    expect(rows.map((r) => r.sessionErrors)).toEqual([
      ['npm ERR! h1 <path>'],
      ['npm ERR! h1 <path>'],
      ['npm ERR! h2 <path>'],
      ['npm ERR! h2 <path>'],
    ]);
    // A session the graph does not know (not observed yet): the episode is listed, empty.
    const unknown = { episodeId: 'e0', sessionId: 'nope', startedAt: T0, endedAt: null };
    expect(await run('episode-chain.cypher', { chain: [unknown] })).toEqual([
      expect.objectContaining({ step: 1, episodeId: 'e0', files: [], sessionErrors: [] }),
    ]);
    expect(await run('episode-chain.cypher', { chain: [] })).toEqual([]);
  });
});
