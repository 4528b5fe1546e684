// The ObserverGraphStore contract: one suite, run against every adapter (SQLite in the unit
// tier, Neo4j in the integration tier). Test support only (not exported from the package index).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rankFileNeighbours } from '../../observation/file-prediction';
import {
  emptyGraphBatch,
  type GraphScope,
  type GraphSessionPairRow,
  type GraphTouchRow,
  type ObserverGraphBatch,
  type ObserverGraphStore,
} from '../observer-graph';

export interface ObserverGraphFixture {
  store: ObserverGraphStore;
  /** A project id no other test (or earlier run) uses. */
  projectName(prefix: string): string;
  close(): Promise<void>;
}

const T0 = Date.UTC(2026, 2, 2, 9);
export const CONTRACT_FILES = {
  A: 'src/auth/token.ts',
  B: 'src/auth/session.ts',
  C: 'src/db/pool.ts',
} as const;
const { A, B, C } = CONTRACT_FILES;

function touch(scope: GraphScope, sessionId: string, path: string, at: number): GraphTouchRow {
  return {
    ...scope,
    sessionId,
    path,
    module: path.split('/').slice(0, 2).join('/'),
    reads: 1,
    edits: 0,
    accesses: 1,
    firstAt: at,
    lastAt: at,
  };
}

export function pair(
  scope: GraphScope,
  sessionId: string,
  fileA: string,
  fileB: string,
  counts: { raw: number; aThenB: number; bThenA: number; at: number },
): GraphSessionPairRow {
  return {
    ...scope,
    sessionId,
    fileA,
    fileB,
    rawCount: counts.raw,
    timeDeltaSumMs: counts.raw * 2_000,
    timedCount: counts.raw,
    aThenB: counts.aThenB,
    bThenA: counts.bThenA,
    sameStep: 0,
    lastObservedAt: counts.at,
  };
}

/** A batch of one session of agent claude-code that touched `files` at `at`, with its pairs. */
export function sessionBatch(
  scope: GraphScope,
  sessionId: string,
  at: number,
  files: string[],
  pairs: GraphSessionPairRow[],
): ObserverGraphBatch {
  return {
    ...emptyGraphBatch(),
    sessions: [
      {
        ...scope,
        sessionId,
        agentId: 'claude-code',
        startedAt: at,
        lastActivityAt: at + 60_000,
        endedAt: null,
        toolCalls: files.length,
      },
    ],
    touches: files.map((f) => touch(scope, sessionId, f, at)),
    sessionPairs: pairs,
    newlyTouchedFiles: files.map((path) => ({ ...scope, path })),
  };
}

/**
 * Three sessions: s1 touches A and B (B read before A, twice), s2 touches A, B and C (B before A
 * again, A with C once), s3 touches only A. So A–B is in 2 of 3 sessions touching either, A–C in
 * 1 of 3; B usually precedes A (4 of 4 ordered observations: directional).
 */
export function contractGraphBatches(scope: GraphScope, run: string): ObserverGraphBatch[] {
  const batch = (sessionId: string, at: number, files: string[], pairs: GraphSessionPairRow[]) =>
    sessionBatch(scope, sessionId, at, files, pairs);
  const [s1, s2, s3] = [`${run}-s1`, `${run}-s2`, `${run}-s3`];
  // Pairs are stored with fileA < fileB: B (session.ts) sorts before A (token.ts).
  return [
    batch(s1, T0, [A, B], [pair(scope, s1, B, A, { raw: 2, aThenB: 2, bThenA: 0, at: T0 + 5 })]),
    batch(
      s2,
      T0 + 3_600_000,
      [A, B, C],
      [
        pair(scope, s2, B, A, { raw: 2, aThenB: 2, bThenA: 0, at: T0 + 3_600_005 }),
        pair(scope, s2, C, A, { raw: 1, aThenB: 0, bThenA: 1, at: T0 + 3_600_009 }),
      ],
    ),
    batch(s3, T0 + 7_200_000, [A], []),
  ];
}

export function describeObserverGraphContract(
  name: string,
  createFixture: () => Promise<ObserverGraphFixture>,
): void {
  describe(`ObserverGraphStore contract: ${name}`, () => {
    let fixture: ObserverGraphFixture;
    beforeAll(async () => {
      fixture = await createFixture();
    });
    afterAll(async () => {
      await fixture?.close();
    });

    const written = async (prefix: string) => {
      const scope = { tenantId: 'acme', projectId: fixture.projectName(prefix) };
      for (const batch of contractGraphBatches(scope, scope.projectId)) {
        await fixture.store.write(batch);
      }
      return scope;
    };

    it('should rank neighbours by sessions with both over sessions with either', async () => {
      const scope = await written('rank');
      const neighbours = await fixture.store.topCoAccessNeighbours({ ...scope, path: A, k: 5 });
      expect(neighbours.map((n) => n.file)).toEqual([B, C]);
      expect(neighbours[0]).toMatchObject({
        file: B,
        rawCount: 4,
        sessionCount: 2,
        avgTimeDeltaMs: 2_000,
        direction: 'incoming',
        lastObservedAt: T0 + 3_600_005,
      });
      expect(neighbours[0].weight).toBeCloseTo(2 / 3, 12);
      expect(neighbours[1]).toMatchObject({ file: C, rawCount: 1, sessionCount: 1 });
      expect(neighbours[1].weight).toBeCloseTo(1 / 3, 12);
      const fromB = await fixture.store.topCoAccessNeighbours({ ...scope, path: B, k: 5 });
      expect(fromB).toMatchObject([{ file: A, direction: 'outgoing' }]);
      expect(await fixture.store.topCoAccessNeighbours({ ...scope, path: A, k: 1 })).toHaveLength(
        1,
      );
    });

    it('should change nothing when the same or older facts are written again', async () => {
      const scope = await written('replay');
      const before = await fixture.store.topCoAccessNeighbours({ ...scope, path: A, k: 5 });
      const batches = contractGraphBatches(scope, scope.projectId);
      for (const batch of [...batches].reverse()) await fixture.store.write(batch);
      // An older, smaller value of s1's pair (a stale retry) must not roll anything back.
      const stale = {
        ...batches[0],
        sessionPairs: [{ ...batches[0].sessionPairs[0], rawCount: 1 }],
      };
      await fixture.store.write(stale);
      expect(await fixture.store.topCoAccessNeighbours({ ...scope, path: A, k: 5 })).toEqual(
        before,
      );
    });

    it('should give the evidence engram neighbors ranks: sessions with both, then the most-touched', async () => {
      const scope = await written('evidence');
      // s4 touches D with B (an edge made by a co-commit only: no time delta), s5 touches D alone.
      const D = 'src/db/migrate.ts';
      const s4 = `${scope.projectId}-s4`;
      const extra = contractGraphBatches(scope, scope.projectId)[2];
      await fixture.store.write({
        ...extra,
        sessions: [{ ...extra.sessions[0], sessionId: s4 }],
        touches: [B, D].map((f) => touch(scope, s4, f, T0 + 9_000_000)),
        sessionPairs: [
          {
            ...pair(scope, s4, B, D, { raw: 1, aThenB: 0, bThenA: 0, at: T0 + 9_000_000 }),
            timedCount: 0,
            timeDeltaSumMs: 0,
            sameStep: 1,
          },
        ],
        newlyTouchedFiles: [B, D].map((path) => ({ ...scope, path })),
      });
      const s5 = `${scope.projectId}-s5`;
      await fixture.store.write({
        ...extra,
        sessions: [{ ...extra.sessions[0], sessionId: s5 }],
        touches: [touch(scope, s5, D, T0 + 9_900_000)],
        sessionPairs: [],
        newlyTouchedFiles: [],
      });
      const evidence = await fixture.store.neighbourEvidence({
        ...scope,
        path: A,
        popular: 5,
        sessionWindow: 200,
      });
      expect(evidence.projectSessions).toBe(5);
      expect(evidence.querySessions).toBe(3);
      const counts = (file: string) => evidence.files.find((f) => f.file === file);
      expect(counts(B)).toMatchObject({ sessions: 3, withQuery: 2 });
      expect(counts(C)).toMatchObject({ sessions: 1, withQuery: 1 });
      expect(counts(D)).toMatchObject({ sessions: 2, withQuery: 0 });
      expect(evidence.files.some((f) => f.file === A)).toBe(false);
      expect(evidence.edges.map((e) => [e.file, e.observed])).toEqual([
        [B, true],
        [C, true],
      ]);
      const ranked = rankFileNeighbours(A, evidence, 5);
      expect(ranked.map((n) => [n.file, n.source])).toEqual([
        [B, 'co_access'],
        [C, 'co_access'],
        [D, 'frequent'],
      ]);
      // (2 + 3/5) / (3 + 1), (1 + 1/5) / 4, (0 + 2/5) / 4
      [0.65, 0.3, 0.1].forEach((score, i) => expect(ranked[i].score).toBeCloseTo(score, 12));
      const fromD = await fixture.store.neighbourEvidence({
        ...scope,
        path: D,
        popular: 1,
        sessionWindow: 200,
      });
      expect(fromD.edges).toMatchObject([{ file: B, observed: false }]);
      expect(rankFileNeighbours(D, fromD, 5).map((n) => [n.file, n.source])).toEqual([
        [B, 'co_commit'],
        [A, 'frequent'],
      ]);
      const unknown = await fixture.store.neighbourEvidence({
        tenantId: 'acme',
        projectId: fixture.projectName('nothing'),
        path: A,
        popular: 5,
        sessionWindow: 200,
      });
      expect(unknown).toEqual({ projectSessions: 0, querySessions: 0, files: [], edges: [] });
    });

    it('should keep tenants and projects apart, and find the tenants of a project', async () => {
      const scope = await written('tenants');
      const other = { tenantId: 'globex', projectId: scope.projectId };
      await fixture.store.write(contractGraphBatches(other, `${scope.projectId}-globex`)[2]);
      expect(await fixture.store.tenantsOfProject(scope.projectId)).toEqual(['acme', 'globex']);
      expect(await fixture.store.topCoAccessNeighbours({ ...other, path: A, k: 5 })).toEqual([]);
      const unknown = fixture.projectName('unknown');
      expect(await fixture.store.tenantsOfProject(unknown)).toEqual([]);
      expect(
        await fixture.store.topCoAccessNeighbours({
          tenantId: 'acme',
          projectId: unknown,
          path: A,
          k: 5,
        }),
      ).toEqual([]);
    });
  });
}
