// `engram review` and `engram memory-md` in embedded mode, on a temp data dir: recorded sessions
// are distilled and reflected by the embedded distiller (running in this process, as `engram
// start` would), and the commands act on the SQLite log through their own connection.
import { testDistillerSettings } from '@engram/app-distiller/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Proposal } from '@engram/contracts';
import { EmbeddedStreamPlatform, SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  startDistiller,
  type RunningDistiller,
  distillerCodecs,
  DEFAULT_DISTILLER_TOPICS,
  ReviewDesk,
  startReviewServer,
} from '@engram/app-distiller';
import type { ProposalMessage } from '@engram/app-distiller';
import {
  compactedSession,
  debuggingSession,
  type RecordedSession,
  caughtUp,
  until,
} from '@engram/app-distiller/testing';
import { memoryMdReport } from './memory-md.command';
import {
  embeddedReviewBackend,
  grpcReviewBackend,
  REVIEW_EXIT_CODES,
  runReview,
} from './review.command';
import { freePort } from '../../../../test/support/free-port';

const TOPICS = DEFAULT_DISTILLER_TOPICS;
const CODECS = distillerCodecs(TOPICS);
const SCOPE = { tenantId: 'acme', projectId: 'acme/api' };
const T0 = Date.UTC(2026, 1, 16, 9, 0);
/** The reflector's clock: the morning of the sessions' day (before the daily hour), then the evening. */
const MORNING = Date.UTC(2026, 1, 16, 5, 0);
const EVENING = Date.UTC(2026, 1, 16, 22, 0);

async function publish(port: SqliteEventLogAdapter, sessions: RecordedSession[]): Promise<void> {
  for (const part of ['prompts', 'toolCalls', 'boundaries', 'lifecycle'] as const) {
    for (const session of sessions) {
      await port.publish(CODECS[part] as never, session[part] as never[]);
    }
  }
}

describe('engram review and engram memory-md (embedded)', () => {
  let dir: string;
  let log: SqliteEventLog;
  let distiller: RunningDistiller;
  let now = MORNING;
  let reflectionsBeforeTheHour = -1;

  beforeAll(async () => {
    vi.stubGlobal('fetch', () => Promise.reject(new Error('no network in embedded mode')));
    dir = mkdtempSync(join(tmpdir(), 'engram-review-'));
    log = SqliteEventLog.open({ dataDir: dir });
    distiller = await startDistiller({
      platform: new EmbeddedStreamPlatform(log),
      settings: testDistillerSettings(),
      sweepIntervalMs: 20,
      retry: { initialMs: 5, maxMs: 50 },
      reflector: { clock: () => now },
    });
    await publish(new SqliteEventLogAdapter(log), [
      debuggingSession('s-debug', T0, SCOPE),
      compactedSession('s-migrate', T0 + 3_600_000, SCOPE),
    ]);
    // Everything distilled before the daily hour; then the day's one reflection reads it all.
    const groups = [
      { groupId: distiller.groupId, topics: [...distiller.inputs, ...distiller.internal] },
    ];
    await caughtUp(log, groups);
    // Triggers that waited for their events are distilled by the timer: then caught up again.
    await until(() => distiller.stage.pendingTriggers === 0);
    await caughtUp(log, groups);
    reflectionsBeforeTheHour = distiller.reflector.counters.reflections;
    now = EVENING;
    await until(() => distiller.reflector.counters.proposals > 0);
  });

  afterAll(async () => {
    await distiller.stop();
    log.close();
    vi.unstubAllGlobals();
    rmSync(dir, { recursive: true, force: true });
  });

  const review = async (action: Parameters<typeof runReview>[1], json = true) => {
    const backend = embeddedReviewBackend(dir, { timeoutMs: 10_000 });
    try {
      return await runReview(backend, action, { json, by: 'tim' });
    } finally {
      await backend.close();
    }
  };
  const listed = async (status: 'pending' | 'all' = 'pending'): Promise<ProposalMessage[]> => {
    const run = await review({ kind: 'list', status });
    expect(run.exitCode).toBe(0);
    return (JSON.parse(run.stdout) as { proposals: ProposalMessage[] }).proposals;
  };

  it('should list the proposals the reflector made from the distilled sessions', async () => {
    // One reflection of the whole day, at the daily hour, none before.
    expect(reflectionsBeforeTheHour).toBe(0);
    expect(distiller.reflector.counters.reflections).toBe(1);
    const proposals = await listed();
    expect(proposals.length).toBeGreaterThanOrEqual(3);
    for (const p of proposals) {
      expect(p.proposalId).toMatch(/^p-20260216-\d{3}$/);
      expect(p).toMatchObject({ tenantId: 'acme', projectId: 'acme/api', status: 'pending' });
      expect(['User', 'Hard Rules', 'System Architecture', 'Patterns']).toContain(p.section);
      expect(p.evidenceMemoryIds.length).toBeGreaterThan(0);
      expect(p.evidenceEventIds.length).toBeGreaterThan(0);
    }
    const texts = proposals.map((p) => p.text).join('\n');
    expect(texts).toMatch(/Never run migrations against the shared dev database/);
    expect(texts).toMatch(/--no-file-parallelism/);
    const people = await review({ kind: 'list', status: 'pending' }, false);
    expect(people.stdout).toMatch(/^# \d+ pending memory proposals/);
    expect(people.stdout).toContain('## Proposed for: Hard Rules');
  });

  it('should approve, edit then approve and reject, with exit codes for the refusals', async () => {
    const pending = (await listed()).sort((a, b) => (a.proposalId < b.proposalId ? -1 : 1));
    const rule = pending.find((p) => p.text.includes('shared dev database'))!;
    const approved = await review({ kind: 'approve', id: rule.proposalId });
    expect(approved.exitCode).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      changed: true,
      proposal: { status: 'approved', decidedBy: 'tim' },
    });
    const approvedProposal = (JSON.parse(approved.stdout) as { proposal: ProposalMessage })
      .proposal;
    expect(approvedProposal.promotedMemoryId).not.toBe('');
    const others = pending.filter((p) => p !== rule);
    const edited = await review({
      kind: 'edit',
      id: others[0].proposalId,
      text: 'Run the auth tests with --no-file-parallelism (they share the clock)',
    });
    expect(JSON.parse(edited.stdout)).toMatchObject({
      proposal: {
        status: 'approved',
        text: 'Run the auth tests with --no-file-parallelism (they share the clock)',
      },
    });
    const rejected = await review({ kind: 'reject', id: others[1].proposalId, reason: 'noise' });
    expect(JSON.parse(rejected.stdout)).toMatchObject({ proposal: { status: 'rejected' } });

    expect(await review({ kind: 'approve', id: 'p-20260216-999' })).toMatchObject({
      exitCode: REVIEW_EXIT_CODES['not-found'],
    });
    expect(await review({ kind: 'reject', id: rule.proposalId })).toMatchObject({
      exitCode: REVIEW_EXIT_CODES.conflict,
      stderr: expect.stringContaining('already approved') as string,
    });
    expect(await review({ kind: 'edit', id: others[2].proposalId, text: '  ' })).toMatchObject({
      exitCode: REVIEW_EXIT_CODES.invalid,
    });
    const decided = (await listed('all')).filter((p) => p.status !== 'pending');
    expect(decided.map((p) => p.status).sort()).toEqual(['approved', 'approved', 'rejected']);
    // Each decision was published once under the proposal's id.
    const records = [...log.replay(TOPICS.proposals)].map(
      (r) => JSON.parse(String(r.value)) as Proposal,
    );
    expect(records.filter((r) => r.status !== 'pending')).toHaveLength(3);
  });

  it('should do the same through the review API with --distributed', async () => {
    const url = `127.0.0.1:${await freePort()}`;
    const desk = new ReviewDesk(new SqliteEventLogAdapter(log), CODECS, { pollMs: 10 });
    const server = await startReviewServer({ desk, url });
    const backend = grpcReviewBackend(url);
    try {
      const run = (action: Parameters<typeof runReview>[1]) =>
        runReview(backend, action, { json: true, tenant: 'acme', by: 'ana' });
      const listed = JSON.parse((await run({ kind: 'list', status: 'pending' })).stdout) as {
        proposals: ProposalMessage[];
      };
      expect(listed.proposals.length).toBeGreaterThan(0);
      const [first] = listed.proposals;
      const rejected = await run({ kind: 'reject', id: first.proposalId, reason: 'later' });
      expect(JSON.parse(rejected.stdout)).toMatchObject({
        changed: true,
        proposal: { proposalId: first.proposalId, status: 'rejected', decidedBy: 'ana' },
      });
      expect(await run({ kind: 'approve', id: first.proposalId })).toMatchObject({
        exitCode: REVIEW_EXIT_CODES.conflict,
      });
      expect(await run({ kind: 'approve', id: 'p-20200101-001' })).toMatchObject({
        exitCode: REVIEW_EXIT_CODES['not-found'],
      });
    } finally {
      await backend.close();
      await server.stop();
    }
  });

  it('should render the approved proposals as the MEMORY.md of the project', async () => {
    const report = await memoryMdReport(new SqliteEventLogAdapter(log), CODECS.memories, {});
    expect(report).toMatchObject({ tenant: 'acme', project: 'acme/api', memories: 2 });
    expect(report.markdown).toMatch(/^# MEMORY — acme\/api\n/);
    const hardRules = report.markdown.split('## Hard Rules')[1].split('## System Architecture')[0];
    expect(hardRules).toContain('Never run migrations against the shared dev database');
    expect(report.markdown).toContain(
      'Run the auth tests with --no-file-parallelism (they share the clock)',
    );
    // Distilled memories nobody reviewed stay out unless asked for.
    const everything = await memoryMdReport(new SqliteEventLogAdapter(log), CODECS.memories, {
      includeUnverified: true,
    });
    expect(everything.memories).toBeGreaterThan(report.memories);
    await expect(
      memoryMdReport(new SqliteEventLogAdapter(log), CODECS.memories, { project: 'nope' }),
    ).resolves.toMatchObject({ memories: 0, tenant: null });
  });
});
