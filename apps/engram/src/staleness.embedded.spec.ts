// Issue #20, staleness from the code itself, on embedded Engram (`engram start`: the SQLite log,
// the observer, the retrieval indexer and store; no servers): a CommitMade that renames a file
// moves the memories about it to the new path (their next versions, same ids), one that deletes
// a memory's only file marks it stale — never injected, shown with the stale prefix when asked.
// A FileManifest (the hook's, at SessionStart) does the same for every memory whose files it no
// longer lists (the sweep).
import type { LifecycleEvent, Memory, Typed } from '@engram/contracts';
import { parseConfig } from '@engram/config';
import type { RankedMemory } from '@engram/core';
import { SqliteEventLogAdapter } from '@engram/embedded';
import { contractCodec } from '@engram/kafka';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { fileGotcha } from '@engram/app-retrieval/testing';
import { startEmbeddedServices, type EmbeddedServices } from './embedded-services';
import { pollUntil as until } from './testing/poll-until';

const SCOPE = { tenantId: 'acme', projectId: 'api' };
const SESSION_FILE = 'src/auth/session.ts';
const SESSIONS_FILE = 'src/auth/sessions.ts';
const LEGACY_FILE = 'src/auth/legacy-cookie.ts';
const T0 = Date.UTC(2026, 0, 5, 9);

const gotcha = (memoryId: string, content: string, file: string): Memory =>
  fileGotcha(SCOPE, memoryId, content, file, T0);

const SESSION_MEMORY = gotcha(
  '6c1e7f3a-0000-4000-8000-000000000001',
  'Session rotation must hold the refresh mutex or two tabs log each other out',
  SESSION_FILE,
);
const LEGACY_MEMORY = gotcha(
  '6c1e7f3a-0000-4000-8000-000000000002',
  'The legacy cookie parser drops quoted values with semicolons',
  LEGACY_FILE,
);

const commit: Typed<'CommitMade'> = {
  type: 'CommitMade',
  eventId: 'commit-event-1',
  ...SCOPE,
  sessionId: 'session-1',
  agentId: 'claude-code',
  userId: null,
  timestamp: T0 + 3_600_000,
  schemaVersion: 1,
  sha: 'f00dfeed',
  changedFiles: ['src/auth/index.ts'],
  renamedFiles: [{ from: SESSION_FILE, to: SESSIONS_FILE }],
  deletedFiles: [LEGACY_FILE],
  message: 'refactor: sessions module, drop the legacy cookie parser',
  branch: 'main',
};

describe('staleness from commits, embedded', () => {
  let dir: string;
  let services: EmbeddedServices;
  let port: SqliteEventLogAdapter;

  const inject = async (filePath: string) =>
    (await services.retrieval.recall.context.injectForFile({ ...SCOPE, filePath })).memories.map(
      (m) => m.memory.memoryId,
    );
  const recall = async (query: string): Promise<RankedMemory[]> =>
    (
      await services.retrieval.recall.service.recall({ ...SCOPE, query, tier: 'memories', k: 5 })
    ).results.flatMap((hit) => (hit.tier === 'memories' ? [hit.memory] : []));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engram-staleness-'));
    services = await startEmbeddedServices({
      config: parseConfig({}),
      dataDir: join(dir, 'data'),
      sweepIntervalMs: 50,
      llm: null,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
    });
    port = new SqliteEventLogAdapter(services.log);
    // Two memories, as the observer or distiller would have written them.
    await port.publish(contractCodec('memory.memories.v1'), [
      { type: 'Memory', ...SESSION_MEMORY },
      { type: 'Memory', ...LEGACY_MEMORY },
    ]);
    await until(
      () => inject(SESSION_FILE),
      (ids) => ids.length === 1,
    );
  }, 60_000);

  afterAll(async () => {
    await services?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should inject both memories for their files before the commit', async () => {
    expect(await inject(SESSION_FILE)).toEqual([SESSION_MEMORY.memoryId]);
    expect(await inject(LEGACY_FILE)).toEqual([LEGACY_MEMORY.memoryId]);
    expect(await inject(SESSIONS_FILE)).toEqual([]);
  });

  it('should move a renamed file memory to the new path and stale a deleted file memory', async () => {
    const lifecycle = contractCodec('agent.lifecycle.v1');
    await port.publish(lifecycle, [commit as LifecycleEvent]);
    await until(
      () => inject(SESSIONS_FILE),
      (ids) => ids.length === 1,
    );
    await until(
      () => inject(LEGACY_FILE),
      (ids) => ids.length === 0,
    );

    // Renamed: injected for the new path, not for the old one; recall finds it with the new path.
    expect(await inject(SESSIONS_FILE)).toEqual([SESSION_MEMORY.memoryId]);
    expect(await inject(SESSION_FILE)).toEqual([]);
    const [moved] = await recall('session rotation refresh mutex');
    expect(moved.memory).toMatchObject({
      memoryId: SESSION_MEMORY.memoryId,
      relatedFiles: [SESSIONS_FILE],
      staleAt: null,
      tags: ['observer', `renamed-from:${SESSION_FILE}`],
    });
    expect(moved.stale).toBe(false);
    expect(moved.content).toBe(SESSION_MEMORY.content);

    // Deleted: never injected; an explicit recall shows it penalised, with the stale prefix.
    const stale = (await recall('legacy cookie parser quoted semicolons')).find(
      (m) => m.memory.memoryId === LEGACY_MEMORY.memoryId,
    )!;
    expect(stale.memory.staleAt).toBe(commit.timestamp);
    expect(stale.stale).toBe(true);
    expect(stale.content).toBe(`[STALE — file no longer exists] ${LEGACY_MEMORY.content}`);
    expect(stale.confidence).toBeCloseTo(LEGACY_MEMORY.confidence * 0.5, 10);
    expect(stale.score.stalePenalty).toBe(0.5);

    // BuildContext leaves the stale memory out (SPEC §7), while the moved one may come.
    const context = await services.retrieval.recall.context.buildContext({
      ...SCOPE,
      sessionId: 'session-2',
      query: 'legacy cookie parser quoted semicolons session rotation',
    });
    expect(context.rendered).not.toContain(LEGACY_MEMORY.content);

    // The same ids, one new version each, on the compacted topic.
    const versions = [...services.log.latestByKey('memory.memories.v1', [0, 1, 2]).values()].map(
      (value) => JSON.parse(value.toString('utf8')) as Memory,
    );
    expect(versions.map((m) => m.memoryId).sort()).toEqual(
      [SESSION_MEMORY.memoryId, LEGACY_MEMORY.memoryId].sort(),
    );
    expect(services.observer.promotion.counters.revisedForFiles).toBe(2);
  }, 60_000);

  it('should change nothing when the same commit is published again', async () => {
    const ends = services.log.endOffsets('memory.memories.v1');
    await port.publish(contractCodec('agent.lifecycle.v1'), [
      { ...commit, eventId: 'commit-event-1-again' },
    ]);
    await until(
      () => Promise.resolve(services.observer.stage.counters.lifecycleEvents),
      (n) => n >= 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(services.log.endOffsets('memory.memories.v1')).toEqual(ends);
    expect(await inject(SESSIONS_FILE)).toEqual([SESSION_MEMORY.memoryId]);
  }, 60_000);
});

describe('the sweep against a FileManifest, embedded', () => {
  let dir: string;
  let services: EmbeddedServices;
  let port: SqliteEventLogAdapter;
  const TOKEN_FILE = 'src/auth/token.ts';
  const CSRF_FILE = 'src/auth/old-csrf.ts';
  const TOKEN_MEMORY = gotcha(
    '6c1e7f3a-0000-4000-8000-000000000011',
    'Token refresh retries must back off or the gateway rate-limits the whole tenant',
    TOKEN_FILE,
  );
  const CSRF_MEMORY = gotcha(
    '6c1e7f3a-0000-4000-8000-000000000012',
    'The old CSRF middleware rejects requests whose origin header has a trailing slash',
    CSRF_FILE,
  );
  const manifest = (eventId: string, sessionId: string, at: number): Typed<'FileManifest'> => ({
    type: 'FileManifest',
    eventId,
    ...SCOPE,
    sessionId,
    agentId: 'claude-code',
    userId: null,
    timestamp: at,
    schemaVersion: 1,
    headSha: 'a1b2c3d4',
    // The tracked files at HEAD: the token module and 20,000 others, not the CSRF middleware.
    files: [
      'package.json',
      TOKEN_FILE,
      ...Array.from({ length: 20_000 }, (_, i) => `src/generated/f${i}.ts`),
    ],
  });

  const inject = async (filePath: string) =>
    (await services.retrieval.recall.context.injectForFile({ ...SCOPE, filePath })).memories.map(
      (m) => m.memory.memoryId,
    );
  const recall = async (query: string): Promise<RankedMemory[]> =>
    (
      await services.retrieval.recall.service.recall({ ...SCOPE, query, tier: 'memories', k: 5 })
    ).results.flatMap((hit) => (hit.tier === 'memories' ? [hit.memory] : []));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engram-manifest-'));
    services = await startEmbeddedServices({
      config: parseConfig({}),
      dataDir: join(dir, 'data'),
      sweepIntervalMs: 50,
      llm: null,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
    });
    port = new SqliteEventLogAdapter(services.log);
    await port.publish(contractCodec('memory.memories.v1'), [
      { type: 'Memory', ...TOKEN_MEMORY },
      { type: 'Memory', ...CSRF_MEMORY },
    ]);
    await until(
      () => inject(CSRF_FILE),
      (ids) => ids.length === 1,
    );
  }, 60_000);

  afterAll(async () => {
    await services?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should stale the memory whose file the manifest no longer lists, and only that one', async () => {
    expect(await inject(TOKEN_FILE)).toEqual([TOKEN_MEMORY.memoryId]);
    const at = T0 + 7_200_000;
    await port.publish(contractCodec('agent.lifecycle.v1'), [
      manifest('manifest-event-1', 'session-3', at) as LifecycleEvent,
    ]);
    await until(
      () => inject(CSRF_FILE),
      (ids) => ids.length === 0,
    );
    expect(await inject(TOKEN_FILE)).toEqual([TOKEN_MEMORY.memoryId]);

    const stale = (await recall('old CSRF middleware origin trailing slash')).find(
      (m) => m.memory.memoryId === CSRF_MEMORY.memoryId,
    )!;
    expect(stale.memory.staleAt).toBe(at);
    expect(stale.memory.relatedFiles).toEqual([CSRF_FILE]);
    expect(stale.stale).toBe(true);
    expect(stale.content).toBe(`[STALE — file no longer exists] ${CSRF_MEMORY.content}`);
    const [live] = await recall('token refresh retries back off gateway');
    expect(live.memory).toMatchObject({ memoryId: TOKEN_MEMORY.memoryId, staleAt: null });
    expect(services.observer.stage.counters.manifestsSwept).toBe(1);
    expect(services.observer.promotion.counters.revisedForFiles).toBe(1);
  }, 60_000);

  it('should write nothing when the same manifest comes again, from another session', async () => {
    const ends = services.log.endOffsets('memory.memories.v1');
    await port.publish(contractCodec('agent.lifecycle.v1'), [
      manifest('manifest-event-2', 'session-4', T0 + 10_800_000) as LifecycleEvent,
    ]);
    await until(
      () => Promise.resolve(services.observer.stage.counters.manifestsSwept),
      (n) => n >= 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(services.log.endOffsets('memory.memories.v1')).toEqual(ends);
    expect(services.observer.promotion.counters.revisedForFiles).toBe(1);
  }, 60_000);
});
