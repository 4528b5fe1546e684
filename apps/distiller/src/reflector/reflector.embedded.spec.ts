// The reflector stage and the review workflow on the embedded SQLite log (SPEC §8): distillations
// in, proposals out; decisions through the ReviewDesk; expiry; restarts and redeliveries.
import { testDistillerSettings } from '../testing/test-settings';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Memory, Proposal } from '@engram/contracts';
import { MS_PER_DAY } from '@engram/core';
import { EmbeddedStreamPlatform, SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  REFLECT_AT,
  weekOfDistillations,
} from '../../../../libs/core/src/distillation/testing/reflector-fixtures';
import { startDistiller, type RunningDistiller } from '../distiller.topology';
import { distillerCodecs } from '../distiller-topics';
import { DEFAULT_DISTILLER_TOPICS } from '../distiller.stage';
import { ReviewDesk, ReviewRequestError } from '../review/review-desk';
import { until } from '../testing/embedded-waits';
import { distillationWork } from './reflector-work';

const TOPICS = DEFAULT_DISTILLER_TOPICS;
const CODECS = distillerCodecs(TOPICS);
const PARTITIONS = [0, 1, 2];

describe('the reflector on the embedded log', () => {
  let dir: string;
  let log: SqliteEventLog;
  let port: SqliteEventLogAdapter;
  let now: number;
  let distiller: RunningDistiller | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-reflector-'));
    log = SqliteEventLog.open({ dataDir: dir });
    port = new SqliteEventLogAdapter(log);
    now = REFLECT_AT;
    // No LLM configured: the extractive reflector; any HTTP call fails the test.
    vi.stubGlobal('fetch', () => Promise.reject(new Error('no network in the extractive path')));
  });

  afterEach(async () => {
    await distiller?.stop();
    distiller = undefined;
    vi.unstubAllGlobals();
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (): Promise<RunningDistiller> => {
    distiller = await startDistiller({
      platform: new EmbeddedStreamPlatform(log),
      settings: testDistillerSettings(),
      sweepIntervalMs: 20,
      retry: { initialMs: 5, maxMs: 50 },
      reflector: { clock: () => now, scheduledHourUtc: 6, quietMs: 0 },
    });
    return distiller;
  };
  const stop = async (): Promise<void> => {
    await distiller?.stop();
    distiller = undefined;
  };
  const desk = () =>
    new ReviewDesk(port, CODECS, { clock: () => now, pollMs: 10, timeoutMs: 10_000 });
  const records = (topic: string): unknown[] =>
    [...log.replay(topic)].map((record) => JSON.parse(String(record.value)) as unknown);
  const latestProposals = (): Proposal[] =>
    [...log.latestByKey(TOPICS.proposals, PARTITIONS).values()].map(
      (value) => JSON.parse(value.toString('utf8')) as Proposal,
    );
  const publishWeek = () =>
    port.publish(CODECS.reflector, weekOfDistillations().map(distillationWork));

  it('should reflect once a day, take decisions, promote approvals, expire the rest and lose none', async () => {
    const running = await start();
    await publishWeek();
    await until(() => latestProposals().length === 9);
    expect(running.reflector.counters.reflections).toBe(1);
    const proposals = latestProposals();
    expect(proposals.map((p) => p.proposalId).sort()).toEqual(
      Array.from({ length: 9 }, (_, i) => `p-20260217-00${i + 1}`),
    );
    for (const p of proposals) {
      expect(p).toMatchObject({ kind: 'reflection', status: 'pending', tenantId: 'acme' });
      expect(p.evidenceMemoryIds.length).toBeGreaterThan(0);
      expect(p.evidenceEventIds.length).toBeGreaterThan(0);
      expect(p.expiresAt).toBe(REFLECT_AT + 7 * MS_PER_DAY);
    }

    // The same distillations again (a redelivery, a replay): nothing new, even on a later day.
    await publishWeek();
    now += MS_PER_DAY;
    await until(() => running.reflector.counters.duplicates === 3);
    await until(() => running.processor.counters.transactions >= 10);
    expect(records(TOPICS.proposals)).toHaveLength(9);

    // Decisions through the desk, as the review API and `engram review` take them.
    const review = desk();
    const pending = await review.list({ tenantId: 'acme', projectId: 'acme/api' });
    expect(pending).toHaveLength(9);
    expect(await review.list({ tenantId: 'other' })).toEqual([]);
    const [first, second, third] = pending.sort((a, b) => (a.proposalId < b.proposalId ? -1 : 1));
    const approved = await review.decide({
      tenantId: 'acme',
      proposalId: first.proposalId,
      action: 'approve',
      by: 'tim',
    });
    expect(approved).toMatchObject({ changed: true, proposal: { status: 'approved' } });
    const edited = await review.decide({
      tenantId: 'acme',
      proposalId: second.proposalId,
      action: 'edit-and-approve',
      text: 'Never commit .env files (secrets live in the vault)',
    });
    expect(edited.proposal).toMatchObject({
      status: 'approved',
      text: 'Never commit .env files (secrets live in the vault)',
    });
    await review.decide({
      tenantId: 'acme',
      proposalId: third.proposalId,
      action: 'reject',
      reason: 'too specific',
    });
    // Repeating a decision changes nothing; contradicting it, or another tenant, is refused.
    const again = await review.decide({
      tenantId: 'acme',
      proposalId: first.proposalId,
      action: 'approve',
    });
    expect(again.changed).toBe(false);
    await expect(
      review.decide({ tenantId: 'acme', proposalId: first.proposalId, action: 'reject' }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await expect(
      review.decide({ tenantId: 'other', proposalId: third.proposalId, action: 'approve' }),
    ).rejects.toBeInstanceOf(ReviewRequestError);

    // Approvals promoted user-verified global memories, each once.
    const promoted = (records(TOPICS.memories) as Memory[]).filter((m) => m.userVerified);
    expect(promoted.map((m) => m.content).sort()).toEqual(
      [first.text, 'Never commit .env files (secrets live in the vault)'].sort(),
    );
    for (const memory of promoted) {
      expect(memory).toMatchObject({
        scope: 'global',
        needsReview: false,
        decayHalfLifeDays: null,
      });
      expect(memory.relations.every((r) => r.relationType === 'derived_from')).toBe(true);
    }
    expect(latestProposals().find((p) => p.proposalId === first.proposalId)?.promotedMemoryId).toBe(
      promoted.find((m) => m.content === first.text)?.memoryId,
    );

    // A restart: the state comes back from the changelog; then seven days pass.
    await stop();
    const restarted = await start();
    now = REFLECT_AT + 7 * MS_PER_DAY;
    await until(() => latestProposals().filter((p) => p.status === 'expired').length === 6);
    expect(restarted.reflector.counters.reflections).toBe(0);
    const final = latestProposals();
    expect(final.map((p) => p.status).sort()).toEqual([
      'approved',
      'approved',
      ...Array<string>(6).fill('expired'),
      'rejected',
    ]);
    // Every state change was published once, under the proposal's id: 9 created, 9 decided.
    expect(records(TOPICS.proposals)).toHaveLength(18);
  });

  it('should wait for the daily hour before reflecting', async () => {
    now = Date.UTC(2026, 1, 17, 5, 0);
    const running = await start();
    await publishWeek();
    await until(() => running.reflector.counters.distillations === 3);
    await until(() => running.processor.counters.transactions >= 6);
    expect(running.reflector.counters.reflections).toBe(0);
    expect(latestProposals()).toEqual([]);
    now = Date.UTC(2026, 1, 17, 6, 0);
    await until(() => running.reflector.counters.reflections === 1);
    await until(() => latestProposals().length === 9);
  });
});
