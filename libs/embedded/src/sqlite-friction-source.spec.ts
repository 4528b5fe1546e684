import {
  CorrectionClusters,
  DEFAULT_FRICTION_SETTINGS,
  type FrictionScope,
  type FrictionSettings,
} from '@engram/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEventLog } from './sqlite-event-log';
import { SqliteFrictionSource, type FrictionTopics } from './sqlite-friction-source';
import { SqliteRetrievalStore } from './sqlite-retrieval-store';
import { sqliteStoreWriter } from './sqlite-retrieval-writer';

const TOPICS: FrictionTopics = {
  prompts: 'agent.prompts.v1',
  toolCalls: 'agent.tool-calls.v1',
  lifecycle: 'agent.lifecycle.v1',
};
const T0 = Date.UTC(2026, 10, 20, 9);
const DAY = 86_400_000;
const WINDOW = { from: T0 - DAY, to: T0 + 6 * DAY };
const ALL: FrictionScope = { kind: 'all' };
const settings: FrictionSettings = {
  ...DEFAULT_FRICTION_SETTINGS,
  minSessionsPerFinding: 2,
  maxEvidence: 2,
};

let n = 0;
function envelope(session: string, at: number, tenant = 'acme', project = 'acme/api') {
  n += 1;
  return {
    eventId: `e-${String(n).padStart(3, '0')}`,
    tenantId: tenant,
    projectId: project,
    sessionId: session,
    agentId: 'codex',
    userId: null,
    timestamp: at,
    schemaVersion: 1,
  };
}

function call(
  session: string,
  at: number,
  fields: { command?: string; error?: string; promptId?: number; tenant?: string },
) {
  return {
    type: 'ToolCallObserved',
    ...envelope(session, at, fields.tenant),
    promptId: fields.promptId ?? 1,
    stepIndex: 0,
    toolName: 'Bash',
    filePaths: [],
    command: fields.command ?? null,
    argsJson: '{}',
    outcome: fields.error === undefined ? 'ok' : 'error',
    errorMessage: fields.error ?? null,
    durationMs: 6_000,
    tokensUsed: 100,
    mcp: false,
  };
}

function prompt(session: string, at: number, text: string, source = 'user') {
  return {
    type: 'PromptSubmitted',
    ...envelope(session, at),
    promptId: 1,
    source,
    channel: 'cli',
    channelKind: 'explicit',
    explicitThreadId: null,
    text,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
  };
}

describe('SqliteFrictionSource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-friction-source-'));

  beforeAll(async () => {
    const log = SqliteEventLog.open({ dataDir: dir });
    for (const topic of [TOPICS.prompts, TOPICS.toolCalls, TOPICS.lifecycle]) {
      log.ensureTopic(topic, 2);
    }
    const calls = [
      // The same migration error (a different temp dir and port each time) in three sessions.
      call('s-1', T0, {
        command: 'npm run migrate',
        error: 'ECONNREFUSED 127.0.0.1:5432 in /tmp/a1/db.ts',
      }),
      call('s-2', T0 + 1000, {
        command: 'npm run migrate',
        error: 'ECONNREFUSED 127.0.0.1:5433 in /tmp/b2/db.ts',
      }),
      call('s-3', T0 + 2000, {
        command: 'npm run migrate',
        error: 'ECONNREFUSED 10.0.0.1:5432 in /tmp/c3/db.ts',
      }),
      // A retry loop: the same failing command three times in one turn, in two sessions…
      ...[0, 1, 2].map((i) =>
        call('s-1', T0 + 10_000 + i, { command: 'make e2e', error: `flaky run ${i}` }),
      ),
      ...[0, 1, 2].map((i) =>
        call('s-2', T0 + 10_000 + i, { command: 'make e2e', error: `flaky run ${i}` }),
      ),
      // …but three failures spread over three turns of s-3 are no loop.
      ...[1, 2, 3].map((p) =>
        call('s-3', T0 + 20_000 + p, { command: 'make e2e', error: 'other', promptId: p }),
      ),
      // Noise: a success, and the migration error outside the window or in another tenant.
      call('s-4', T0, { command: 'npm run migrate' }),
      call('s-5', T0 + 30 * DAY, {
        command: 'npm run migrate',
        error: 'ECONNREFUSED 1.1.1.1:1 in /tmp/z/db.ts',
      }),
      call('s-6', T0, {
        command: 'npm run migrate',
        error: 'ECONNREFUSED 1.1.1.1:1 in /tmp/y/db.ts',
        tenant: 'globex',
      }),
    ];
    log.append(
      TOPICS.toolCalls,
      calls.map((e) => ({ key: e.sessionId, value: JSON.stringify(e) })),
    );
    const prompts = [
      prompt('s-1', T0 + 5, "No, don't use npm here, we use pnpm."),
      prompt('s-2', T0 + 5, 'fix the flaky e2e test'),
      prompt('s-3', T0 + 5, 'Never use npm here: pnpm only.'),
      prompt('s-4', T0 + 5, "No, don't use npm here, we use pnpm.", 'agent'),
    ];
    log.append(
      TOPICS.prompts,
      prompts.map((e) => ({ key: e.sessionId, value: JSON.stringify(e) })),
    );
    log.close();

    const store = SqliteRetrievalStore.open({ dataDir: dir });
    const memory = (id: string, staleAt: number | null, lastAccessedAt: number) => ({
      action: 'upsert' as const,
      tier: 'memories' as const,
      id,
      document: {
        tenantId: 'acme',
        projectId: 'acme/api',
        text: 'refresh.ts retries twice',
        memoryId: id,
        memoryType: 'gotcha',
        content: 'refresh.ts retries twice',
        staleAt,
        lastAccessedAt,
        accessCount: 4,
        provenanceSessionIds: ['s-9'],
      },
    });
    await sqliteStoreWriter(store).write([
      memory('m-served-stale', T0, T0 + DAY),
      memory('m-stale-unserved', T0 + DAY, T0),
      memory('m-fresh', null, T0 + DAY),
    ]);
    store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const withSource = <T>(read: (source: SqliteFrictionSource) => T): T => {
    const source = SqliteFrictionSource.open({ dataDir: dir, topics: TOPICS });
    try {
      return read(source);
    } finally {
      source.close();
    }
  };

  it('should count the sessions and events of the window and scope', () => {
    expect(withSource((s) => s.totals(WINDOW, ALL))).toEqual({ sessions: 5, events: 18 });
    expect(withSource((s) => s.totals(WINDOW, { kind: 'tenant', tenantId: 'globex' }))).toEqual({
      sessions: 1,
      events: 1,
    });
  });

  it('should group failures by normalised error in SQL, with bounded sorted samples', () => {
    const rows = withSource((s) => s.failurePatterns(WINDOW, ALL, settings));
    const migrate = rows.filter((row) => row.normalisedError.startsWith('ECONNREFUSED'));
    expect(migrate).toEqual([
      expect.objectContaining({
        tenantId: 'acme',
        normalisedError: 'ECONNREFUSED <n>:<n> in <path>',
        sessions: 3,
        occurrences: 3,
        durationMs: 18_000,
        tokens: 300,
        sessionIds: ['s-1', 's-2'],
        sampleCommand: 'npm run migrate',
      }),
    ]);
    expect(migrate[0].eventIds).toHaveLength(2);
  });

  it('should find retry loops within one user turn only', () => {
    const rows = withSource((s) => s.retryLoops(WINDOW, ALL, settings));
    expect(rows).toEqual([
      expect.objectContaining({
        command: 'make e2e',
        sessions: 2,
        occurrences: 6,
        sessionIds: ['s-1', 's-2'],
      }),
    ]);
    const timeline = withSource((s) => s.failureTimeline(WINDOW, ALL, settings));
    expect(timeline).toEqual([
      // 3 migrate errors + the 6 + 3 `make e2e` ones ("flaky run <n>" in 2 sessions, "other" in 1).
      { day: '2026-11-20', count: 9, kind: 'recurring-failure' },
      { day: '2026-11-20', count: 6, kind: 'tool-misuse' },
    ]);
  });

  it("should stream only the users' corrections into the clusters", () => {
    const clusters = new CorrectionClusters(settings);
    expect(withSource((s) => s.corrections(WINDOW, ALL, clusters))).toBe(2);
    expect(clusters.findings().map((f) => [f.sessions, f.evidence.sessionIds])).toEqual([
      [2, ['s-1', 's-3']],
    ]);
  });

  it('should read the stale memories served after they went stale from retrieval.db', () => {
    const rows = withSource((s) => s.staleMemories(WINDOW, ALL));
    expect(rows).toEqual([
      expect.objectContaining({
        memoryId: 'm-served-stale',
        staleAt: T0,
        lastAccessedAt: T0 + DAY,
        accessCount: 4,
        provenanceSessionIds: ['s-9'],
      }),
    ]);
  });
});
