// `engram memory history|prune` on the embedded stack, end to end: the SQLite event log, the
// embedded retrieval indexer consuming memory.memories.v1 into the SQLite store (supersession
// included), and the recall services on that store, whose Feedback DELETE writes the tombstone.
import {
  createRecallStack,
  sqliteBackend,
  LEXICAL_ONLY_EMBEDDER,
  type RecallStack,
} from '@engram/app-retrieval';
import type { Memory } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG, NO_PRUNE_CRITERIA } from '@engram/core';
import { fileGotcha, PROJECT, TENANT } from '@engram/app-retrieval/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmbeddedMemories, type EmbeddedMemories } from '../testing/embedded-memories';
import {
  openMemoryLifecycle,
  publishMemoryRecordsTo,
  type MemoryLifecycle,
} from './memory-lifecycle';
import { parseDays } from './command-options';
import { runMemoryHistory } from './memory-history';
import { formatPrune, pruneMemories } from './memory-prune';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 27, 9, 0, 0);

/** A distilled gotcha of the project, idle for 40 days unless `overrides` say otherwise. */
function memory(overrides: Partial<Memory> & { memoryId: string }): Memory {
  const at = NOW - 40 * DAY;
  const scope = { tenantId: TENANT, projectId: PROJECT };
  return {
    ...fileGotcha(scope, overrides.memoryId, '', 'src/app.ts', at),
    confidence: 0.7,
    tags: ['distilled', 'trigger:episode_closed'],
    relatedFiles: [],
    source: 'distilled',
    userVerified: false,
    ...overrides,
  };
}

const MEMORIES: Memory[] = [
  memory({
    memoryId: 'm-stale',
    content: 'The session cookie parser lives in src/auth/cookies.ts',
    relatedFiles: ['src/auth/cookies.ts'],
    staleAt: NOW - 30 * DAY,
  }),
  memory({
    memoryId: 'm-verified',
    content: 'The legacy billing cron must run before midnight UTC',
    staleAt: NOW - 30 * DAY,
    userVerified: true,
  }),
  memory({ memoryId: 'm-live', content: 'Postgres pool exhausted under load tests' }),
  memory({
    memoryId: 'm-recent',
    content: 'Webhook retries stop after five attempts',
    staleAt: NOW - 2 * 3_600_000,
    createdAt: NOW - 3_600_000,
    lastAccessedAt: NOW - 3_600_000,
  }),
  memory({
    memoryId: 'm-axios',
    memoryType: 'decision',
    content: 'The API client uses axios for outgoing HTTP requests',
    createdAt: NOW - 20 * DAY,
    lastAccessedAt: NOW - 20 * DAY,
  }),
];

/** Published after MEMORIES: it supersedes m-axios in the store (the indexer's supersession). */
const UNDICI = memory({
  memoryId: 'm-undici',
  memoryType: 'decision',
  content: 'The API client no longer uses axios for outgoing HTTP requests; it uses undici instead',
  createdAt: NOW - 10 * DAY,
  lastAccessedAt: NOW - 10 * DAY,
});

interface PrintedVersion {
  source: string;
  memory: Memory | null;
  reasons: string[];
  changes: { field: string }[];
}

/** The versions `engram memory history --json` printed. */
function versionsOf(run: { stdout: string }): PrintedVersion[] {
  return (JSON.parse(run.stdout) as { versions: PrintedVersion[] }).versions;
}

describe('engram memory prune and history (embedded)', () => {
  let fixture: EmbeddedMemories;
  let stack: RecallStack;
  let lifecycle: MemoryLifecycle;

  const recalled = async (query: string): Promise<string[]> => {
    const answer = await stack.service.recall({
      tenantId: TENANT,
      projectId: PROJECT,
      query,
      tier: 'memories',
    });
    return answer.results.flatMap((hit) =>
      hit.tier === 'memories' ? [hit.memory.memory.memoryId] : [],
    );
  };
  const prune = (over: Partial<Parameters<typeof pruneMemories>[1]> = {}) =>
    pruneMemories(lifecycle, {
      criteria: { ...NO_PRUNE_CRITERIA, stale: true },
      tenantId: TENANT,
      projectId: PROJECT,
      dryRun: false,
      now: NOW,
      ...over,
    });

  beforeEach(async () => {
    fixture = await startEmbeddedMemories('memory-cmd', MEMORIES);
    await fixture.publish([UNDICI]);
    const { events, codec, retrieval } = fixture;
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(retrieval.store),
      embedder: LEXICAL_ONLY_EMBEDDER,
      publish: publishMemoryRecordsTo(events, codec),
      publishTombstones: (_record, keys) => events.publishTombstones(codec.topic, keys),
    });
    lifecycle = {
      log: events,
      codec,
      hasTopic: true,
      stack,
      tenantsWithProject: (project) => retrieval.store.tenantsWithProject(project),
      close: () => Promise.resolve(),
    };
  });

  afterEach(async () => {
    await stack.access.close();
    await fixture.stop();
  });

  it('--dry-run: lists the stale and superseded memories, keeps confirmed and recent ones, writes nothing', async () => {
    const ends = await fixture.events.endOffsets(fixture.codec.topic);
    const outcomes = await prune({ dryRun: true });
    expect(outcomes.map((o) => [o.memoryId, o.reason, o.status])).toEqual([
      ['m-axios', 'superseded', 'would prune'],
      ['m-stale', 'stale', 'would prune'],
    ]);
    expect(await fixture.events.endOffsets(fixture.codec.topic)).toEqual(ends);
    expect(formatPrune(outcomes, true)).toMatch(/^would prune 2 memories \(dry run/);
    expect(await recalled('session cookie parser')).toContain('m-stale');
  });

  it('prune → recall no longer returns it → history shows the pruned version and the tombstone', async () => {
    expect(await recalled('session cookie parser')).toContain('m-stale');
    const outcomes = await prune({ by: 'tim' });
    expect(outcomes.map((o) => [o.memoryId, o.status])).toEqual([
      ['m-axios', 'pruned'],
      ['m-stale', 'pruned'],
    ]);
    // Out of the store at once (Feedback DELETE), and still out once the indexer caught up.
    expect(await recalled('session cookie parser')).not.toContain('m-stale');
    await fixture.indexed();
    expect(await recalled('session cookie parser')).not.toContain('m-stale');
    expect(await recalled('billing cron midnight')).toEqual(['m-verified']);
    expect(await recalled('webhook retries attempts')).toEqual(['m-recent']);
    expect(await recalled('undici HTTP requests')).toContain('m-undici');

    const history = await runMemoryHistory(lifecycle, 'm-stale', { json: true });
    expect(history.exitCode).toBe(0);
    const versions = versionsOf(history);
    expect(versions.map((v) => v.changes.map((c) => c.field))).toEqual([
      ['created'],
      ['tags'],
      ['deleted'],
    ]);
    expect(versions[1].memory?.tags).toContain('pruned:stale');
    expect(versions[1].reasons).toEqual(['pruned (stale)', 'written by tim']);
    expect(versions[2]).toMatchObject({ source: 'log', memory: null });
    expect(versions[2].reasons).toEqual(['deleted after pruning (stale)']);

    // The superseded one: pruned with its demotion (staleAt, superseded-by) from the store.
    const axios = versionsOf(await runMemoryHistory(lifecycle, 'm-axios', { json: true }));
    expect(axios[1].memory?.tags).toEqual(
      expect.arrayContaining(['superseded-by:m-undici', 'pruned:superseded']),
    );
    expect(axios.at(-1)?.reasons).toEqual(['deleted after pruning (superseded)']);

    // Nothing is left to prune, and nothing is pruned twice.
    expect(await prune()).toEqual([]);
  });

  it('history: a supersession the indexer wrote to the store only shows as the last entry', async () => {
    const run = await runMemoryHistory(lifecycle, 'm-axios', {});
    expect(run.stdout).toMatch(
      /^memory m-axios \(decision, module; tenant acme, project acme\/api\): 2 versions/,
    );
    expect(run.stdout).toContain('why: superseded by m-undici');
    expect(run.stdout).toContain('retrieval store (derived, not on the log)');
    const undici = await runMemoryHistory(lifecycle, 'm-undici', { json: true });
    const entries = versionsOf(undici);
    expect(entries.map((e) => e.source)).toEqual(['log', 'store']);
    expect(entries[1].reasons).toEqual(['supersedes m-axios']);
  });

  it('history through the embedded opener (the command path), and an unknown id', async () => {
    await prune();
    const opened = await openMemoryLifecycle({ dataDir: fixture.dir, clientId: 'test' });
    try {
      const run = await runMemoryHistory(opened, 'm-stale', {});
      expect(run.stdout.split('\n')[0]).toBe(
        'memory m-stale (gotcha, module; tenant acme, project acme/api): 3 versions',
      );
      expect(run.stdout).toContain('why: pruned (stale)');
      expect(run.stdout).toContain('tags: + pruned:stale');
      expect(run.stdout).toContain('tombstone');
      expect(run.stdout).toContain('why: deleted after pruning (stale)');
      expect(await runMemoryHistory(opened, 'm-nope', {})).toMatchObject({ exitCode: 3 });
    } finally {
      await opened.close();
    }
  });

  it('should prune by age only what every criterion given selects', async () => {
    const outcomes = await prune({
      criteria: { ...NO_PRUNE_CRITERIA, olderThanDays: parseDays('30d'), types: ['gotcha'] },
      dryRun: true,
    });
    // m-verified is old enough but confirmed; m-axios is a decision; m-recent is recent.
    expect(outcomes.map((o) => [o.memoryId, o.reason])).toEqual([
      ['m-live', 'older-than-30d'],
      ['m-stale', 'older-than-30d'],
    ]);
  });
});
