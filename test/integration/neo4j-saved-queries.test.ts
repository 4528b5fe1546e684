import {
  emptyGraphBatch,
  observerSettings,
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

describe('deploy/neo4j saved queries on the observer graph', () => {
  let writerDriver: Driver;
  let reader: Driver;
  let store: Neo4jObserverGraphWriter;
  let scope: GraphScope;
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
  });
  afterAll(async () => {
    await writerDriver?.close();
    await reader?.close();
  });

  it('should have a test for every saved query', () => {
    expect(readdirSync(QUERIES).sort()).toEqual([
      'co-access-neighbourhood.cypher',
      'files-of-episode.cypher',
      'hot-files.cypher',
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
});
