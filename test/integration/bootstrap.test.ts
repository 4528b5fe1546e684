import { decodePairFacts, observerSettings } from '@engram/core';
import {
  createGraphWriterDriver,
  ensureGraphSchema,
  Neo4jObserverGraphWriter,
} from '@engram/neo4j';
import type { Driver } from 'neo4j-driver';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bootstrapGraph } from '../../apps/engram/src/commands/bootstrap.command';
import { uniqueName } from './support/unique';

/** A throwaway repository with fixed names and dates: the same history on every run. */
function makeGitRepo(dir: string, commits: string[][]): void {
  mkdirSync(dir, { recursive: true });
  const git = (args: string[], date = '2026-01-01T10:00:00Z') =>
    execFileSync('git', ['-C', dir, ...args], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Test',
        GIT_AUTHOR_EMAIL: 'test@example.com',
        GIT_COMMITTER_NAME: 'Test',
        GIT_COMMITTER_EMAIL: 'test@example.com',
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_DATE: date,
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: dir,
      },
    });
  git(['init', '-q', '-b', 'main']);
  commits.forEach((files, i) => {
    for (const file of files) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), `change ${i}\n`);
    }
    git(['add', '-A']);
    git(['commit', '-q', '-m', `commit ${i}`], `2026-01-01T10:${String(i).padStart(2, '0')}:00Z`);
  });
}

describe('engram bootstrap on Neo4j', () => {
  let root: string;
  let driver: Driver;
  let store: Neo4jObserverGraphWriter;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'engram-bootstrap-int-'));
    makeGitRepo(join(root, 'shop'), [
      ['src/auth/token.ts', 'src/auth/session.ts'],
      ['src/auth/token.ts', 'src/auth/session.ts', 'test/auth.spec.ts'],
      ['src/auth/token.ts', 'src/db/pool.ts'],
      ['README.md'],
      ['src/auth/token.ts', 'package-lock.json'],
      ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts'],
    ]);
    driver = createGraphWriterDriver({ url: inject('infra').neo4jUrl });
    await ensureGraphSchema(driver);
    store = new Neo4jObserverGraphWriter(driver, observerSettings());
  });
  afterAll(async () => {
    await driver?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('should seed the weights of co-commits, and change nothing when run again', async () => {
    const project = uniqueName('shop');
    const options = { repo: join(root, 'shop'), project, tenant: 'acme', maxCommits: 100 };
    // batchRows 4: several transactions, so weights of earlier batches must be refreshed.
    const bounded = { ...options, maxFilesPerCommit: 4, batchRows: 4 };
    const report = await bootstrapGraph(store, bounded, 'distributed');
    expect(report).toMatchObject({ commitsRead: 6, commitsUsed: 5, skippedTooManyFiles: 1 });
    expect(report.batches).toBeGreaterThan(1);
    const query = { tenantId: 'acme', projectId: project, path: 'src/auth/token.ts', k: 5 };
    const neighbours = await store.topCoAccessNeighbours(query);
    // As on the embedded graph (bootstrap.command.spec.ts): session.ts 2 of 4, the others 1 of 4.
    expect(neighbours.map((n) => [n.file, n.sessionCount, n.weight, n.direction])).toEqual([
      ['src/auth/session.ts', 2, 0.5, 'both'],
      ['src/db/pool.ts', 1, 0.25, 'both'],
      ['test/auth.spec.ts', 1, 0.25, 'both'],
    ]);
    const counts = async () => {
      const { records } = await driver.executeQuery(
        `MATCH (f:File {tenantId: 'acme', projectId: $project})
         OPTIONAL MATCH (f)<-[t:TOUCHED]-()
         WITH count(DISTINCT f) AS files, count(t) AS touches
         MATCH (s:Session {tenantId: 'acme', projectId: $project})
         RETURN files, touches, collect(s.pairFacts) AS pairFacts`,
        { project },
      );
      const row = records[0];
      // Each session's pair facts (JSON on the session node): one entry per pair it co-committed.
      const pairs = (row.get('pairFacts') as (string | null)[]).reduce(
        (sum, facts) => sum + Object.keys(decodePairFacts(facts)).length,
        0,
      );
      const number = (key: string) => (row.get(key) as { toNumber(): number }).toNumber();
      return { files: number('files'), touches: number('touches'), pairs };
    };
    const before = await counts();
    expect(before).toEqual({ files: 5, touches: 9, pairs: 5 });
    await bootstrapGraph(store, { ...options, maxFilesPerCommit: 4 }, 'distributed');
    expect(await store.topCoAccessNeighbours(query)).toEqual(neighbours);
    expect(await counts()).toEqual(before);
  });
});
