// Friction proposals under review on real Kafka + the schema registry (issue #21, distributed
// mode's store): the report's review step publishes them to memory.proposals.v1 — Avro, through
// the registry — where the distiller's review desk (what the review API serves) lists and decides
// them; a re-run writes nothing; an approved file change becomes a diff `git apply` takes; the
// next report's recurrence check sees the approved cluster again.
import { parseConfig } from '@engram/config';
import {
  buildFrictionReport,
  DEFAULT_FRICTION_SETTINGS,
  frictionPatch,
  type FrictionFinding,
  type FrictionReport,
} from '@engram/core';
import { AvroRegistry, KafkaEventLog } from '@engram/kafka';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  distillerCodecs,
  prefixedDistillerTopics,
} from '../../apps/distiller/src/distiller-topics';
import { ReviewDesk } from '../../apps/distiller/src/review/review-desk';
import { kafkaFrictionReviewStore } from '../../apps/engram/src/commands/friction-review-kafka';
import { closeFrictionLoop } from '../../apps/engram/src/commands/friction-review-loop';
import type { FrictionReviewStore } from '../../apps/engram/src/commands/friction-review-store';
import { testKafka } from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

const DAY = 86_400_000;
const WINDOW = { from: Date.UTC(2026, 11, 1), to: Date.UTC(2026, 11, 8) };
const REPORTED_AT = Date.UTC(2026, 11, 8, 9);
const APPROVED_AT = Date.UTC(2026, 11, 8, 10);

function finding(tenantId: string, overrides: Partial<FrictionFinding>): FrictionFinding {
  return {
    kind: 'tool-misuse',
    key: 'retry-lint',
    subject: 'subject-pnpm-lint',
    alsoSeenAs: ['recurring-failure'],
    tenantId,
    projectIds: ['acme/web'],
    title: 'Bash `pnpm run lint` rerun while it keeps failing',
    summary: 'Rerun 3 times in each of 4 sessions.',
    sessions: 4,
    firstAt: WINDOW.from + DAY,
    lastAt: WINDOW.from + 4 * DAY,
    cost: { occurrences: 12, measuredMinutes: 4, tokens: 4_800, estimatedMinutes: 32.8 },
    evidence: { sessionIds: ['w1-0', 'w1-1'], eventIds: ['e-1', 'e-2'], memoryIds: [] },
    agentIds: ['codex'],
    proposedLines: ['- When `pnpm run lint` fails, read its first error before rerunning it.'],
    memoryId: null,
    confidence: 0.7,
    ...overrides,
  };
}

function reportOf(window: typeof WINDOW, findings: FrictionFinding[]): FrictionReport {
  return buildFrictionReport({
    window,
    scope: { kind: 'all' },
    totals: { sessions: 20, events: 1_000 },
    findings,
    timeline: [],
    maxEvidence: 10,
  });
}

describe('friction proposals under review on real Kafka', () => {
  const run = uniqueName('frv').replace(/[^a-z0-9]/g, '');
  const tenant = `acme-${run}`;
  const prefix = `${uniqueName('it-frv')}.`;
  const config = parseConfig({
    ENGRAM_KAFKA_BROKERS: inject('infra').kafkaBrokers.join(','),
    ENGRAM_SCHEMA_REGISTRY_URL: inject('infra').registryUrl,
    ENGRAM_TOPIC_PREFIX: prefix,
  });
  const codecs = distillerCodecs(prefixedDistillerTopics(prefix));
  let store: FrictionReviewStore;
  let deskLog: KafkaEventLog;
  let desk: ReviewDesk;
  let now = REPORTED_AT;
  const week1 = reportOf(WINDOW, [
    finding(tenant, {}),
    finding(tenant, {
      kind: 'repeated-correction',
      key: 'said-pnpm',
      subject: null,
      alsoSeenAs: [],
      title: 'Said again and again: "use pnpm, not npm"',
      proposedLines: ["- Use pnpm, not npm: it is this repository's package manager."],
      sessions: 2,
    }),
  ]);
  const loop = (report: FrictionReport, since: FrictionReport['proposals'] = []) =>
    closeFrictionLoop(report, store, {
      now,
      settings: DEFAULT_FRICTION_SETTINGS,
      reportOver: (window) =>
        Promise.resolve({ ...reportOf(window, []), proposals: since } satisfies FrictionReport),
    });

  beforeAll(async () => {
    store = await kafkaFrictionReviewStore(config);
    deskLog = new KafkaEventLog(testKafka(), new AvroRegistry(inject('infra').registryUrl));
    await deskLog.connect();
    desk = new ReviewDesk(deskLog, codecs, { timeoutMs: 10_000, clock: () => now });
  });

  afterAll(async () => {
    await store?.close();
    await deskLog?.disconnect();
  });

  let lintId = '';
  let correctionId = '';

  it('should publish the proposals where the review desk lists them, once', async () => {
    const first = await loop(week1);
    expect(first.written).toBe(2);
    [lintId, correctionId] = first.report.proposals.map((p) => p.id);
    expect([lintId, correctionId]).toEqual(['f-20261207-001', 'f-20261207-002']);
    const listed = await desk.list({ tenantId: tenant, status: 'pending' });
    expect(listed.map((p) => [p.proposalId, p.kind, p.target, p.status])).toEqual([
      [lintId, 'friction', 'AGENTS.md', 'pending'],
      [correctionId, 'friction', 'AGENTS.md', 'pending'],
    ]);
    expect(listed[0]).toMatchObject({
      projectId: 'acme/web',
      section: 'tool-misuse:subject-pnpm-lint',
      severity: 131.2,
      createdAt: REPORTED_AT,
      expiresAt: REPORTED_AT + 7 * DAY,
      evidenceSessionIds: ['w1-0', 'w1-1'],
    });
    now = REPORTED_AT + 60_000;
    const again = await loop(week1);
    expect(again.written).toBe(0);
    expect(again.report.proposals.map((p) => p.id)).toEqual([lintId, correctionId]);
  });

  it('should approve and reject through the desk, and write the approved diff', async () => {
    now = APPROVED_AT;
    const approved = await desk.decide({
      tenantId: tenant,
      proposalId: lintId,
      action: 'approve',
      by: 'tim',
    });
    expect(approved).toMatchObject({
      changed: true,
      proposal: { status: 'approved', decidedAt: APPROVED_AT, userId: 'tim' },
    });
    const rejected = await desk.decide({
      tenantId: tenant,
      proposalId: correctionId,
      action: 'reject',
      by: 'tim',
    });
    expect(rejected.proposal.status).toBe('rejected');
    // Read back from Kafka by a desk that saw none of it.
    const fresh = new ReviewDesk(deskLog, codecs, { clock: () => now });
    expect((await fresh.list({ tenantId: tenant, status: 'all' })).map((p) => p.status)).toEqual([
      'approved',
      'rejected',
    ]);
    const patch = frictionPatch(await fresh.get(tenant, lintId), '# Agents\n');
    if (!patch.ok) throw new Error(patch.message);
    const repo = mkdtempSync(join(tmpdir(), 'engram-frv-'));
    try {
      execFileSync('git', ['init', '-q'], { cwd: repo });
      writeFileSync(join(repo, 'AGENTS.md'), '# Agents\n');
      writeFileSync(join(repo, 'patch.diff'), patch.patch);
      execFileSync('git', ['apply', '--check', 'patch.diff'], { cwd: repo, stdio: 'pipe' });
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('should keep decisions on the next report and check the approved one for recurrence', async () => {
    now = Date.UTC(2026, 11, 15, 9);
    const week2Window = { from: WINDOW.to, to: WINDOW.to + 7 * DAY };
    const seenAgain = reportOf(week2Window, [
      finding(tenant, {
        kind: 'recurring-failure',
        key: 'fails-lint',
        alsoSeenAs: [],
        sessions: 1,
        lastAt: WINDOW.to + 2 * DAY,
        cost: { occurrences: 1, measuredMinutes: 0, tokens: 0, estimatedMinutes: 2 },
        evidence: { sessionIds: ['w2-0'], eventIds: ['e-9'], memoryIds: [] },
      }),
    ]).proposals;
    const next = await loop(reportOf(week2Window, [finding(tenant, { sessions: 2 })]), seenAgain);
    expect(next.written).toBe(0);
    expect(next.report.proposals.map((p) => p.id)).toEqual([lintId]);
    expect(next.recurrence).toEqual([
      expect.objectContaining({
        proposalId: lintId,
        approvedAt: APPROVED_AT,
        recurred: true,
        sessions: 1,
        occurrences: 1,
        evidence: { sessionIds: ['w2-0'], eventIds: ['e-9'] },
      }),
    ]);
  });
});
