// Closing the loop of the friction report (issue #21), end to end in embedded mode on a real data
// dir: the report publishes its proposals for review on memory.proposals.v1 (idempotently),
// `engram review` lists and decides them — on the SQLite log and over the review gRPC API —,
// `engram review apply` writes an approved change as a diff `git apply` takes, an unreviewed one
// expires after 7 days and stays listed, and the next report says whether each approved
// proposal's friction recurred since its approval, in md, json and html.
import { parseConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import {
  buildFrictionReport,
  decideFrictionProposal,
  frictionProposalRecord,
  type FrictionRecurrence,
  type FrictionReport,
} from '@engram/core';
import { Command } from 'commander';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { v5 as uuidv5 } from 'uuid';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  distillerCodecs,
  prefixedDistillerTopics,
  ReviewDesk,
  startReviewServer,
  type ProposalMessage,
} from '@engram/app-distiller';
import { SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { EVENT_FIXTURES } from '../../../../libs/contracts/src/testing/event-fixtures';
import { freePort } from '../../../../test/support/free-port';
import { registerFrictionReportCommand } from './friction-report.command';
import { runReplay } from './replay.command';
import { embeddedTarget } from './replay-targets';
import { embeddedReviewBackend, grpcReviewBackend } from './review-backends';
import { registerReviewCommand, REVIEW_EXIT_CODES, runReview } from './review.command';
import { runReviewApply } from './review-apply';

const NAMESPACE = '0b6a3d2e-7f41-5c8a-9e1d-4a2f6c8b3e57';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Week 1: the frictions. The report runs on Dec 8, the proposals are decided that morning. */
const WEEK_1 = Date.UTC(2026, 11, 1, 9);
const FIRST_REPORT_AT = Date.UTC(2026, 11, 8, 9);
const APPROVED_AT = Date.UTC(2026, 11, 8, 10);
/** Week 2: the lint fails again (after its approval); the npm correction is not said again. */
const WEEK_2 = Date.UTC(2026, 11, 9, 9);
const SECOND_REPORT_AT = Date.UTC(2026, 11, 15, 10);

const LINT_ERROR = (n: number) => `ESLint found ${n} problems in /tmp/build/src/app.ts`;

/** acme/web's events, on the contract fixtures (every other field as they have it). */
function scoped(sessionId: string, at: number, eventId: string) {
  return { projectId: 'acme/web', sessionId, agentId: 'codex', timestamp: at, eventId };
}

function prompt(sessionId: string, at: number, promptId: number, text: string) {
  return {
    type: 'PromptSubmitted',
    ...EVENT_FIXTURES.PromptSubmitted,
    ...scoped(sessionId, at, uuidv5(`prompt:${sessionId}:${promptId}`, NAMESPACE)),
    promptId,
    explicitThreadId: sessionId,
    text,
  } satisfies Typed<'PromptSubmitted'>;
}

function lintFailure(sessionId: string, at: number, attempt: number) {
  return {
    type: 'ToolCallObserved',
    ...EVENT_FIXTURES.ToolCallObserved,
    ...scoped(sessionId, at, uuidv5(`lint:${sessionId}:${attempt}`, NAMESPACE)),
    promptId: 1,
    stepIndex: attempt,
    filePaths: [],
    command: 'pnpm run lint',
    argsJson: '{}',
    errorMessage: LINT_ERROR(attempt + 2),
  } satisfies Typed<'ToolCallObserved'>;
}

/** Sessions of week 1 (each reruns a failing lint; two say the same correction) and week 2. */
function events(): string[] {
  const lines: object[] = [];
  for (let s = 0; s < 4; s += 1) {
    const id = `w1-${s}`;
    const at = WEEK_1 + s * DAY;
    lines.push(prompt(id, at, 1, 'Fix the lint errors in the web app, please.'));
    for (let attempt = 0; attempt < 3; attempt += 1) {
      lines.push(lintFailure(id, at + (attempt + 1) * 60_000, attempt));
    }
    if (s < 2) {
      lines.push(prompt(id, at + HOUR, 2, "No, don't use npm here: we use pnpm for installs."));
    }
  }
  for (let s = 0; s < 2; s += 1) {
    const id = `w2-${s}`;
    const at = WEEK_2 + s * DAY;
    lines.push(prompt(id, at, 1, 'Ship the header change.'));
    lines.push(lintFailure(id, at + 60_000, 0));
  }
  return lines.map((line) => JSON.stringify(line));
}

describe('friction proposals under review (embedded)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-friction-review-'));
  const dataDir = join(dir, 'data');
  const codecs = distillerCodecs(prefixedDistillerTopics(parseConfig({}).topicPrefix));

  async function report(until: number, out: string, ...args: string[]): Promise<string> {
    const program = new Command().exitOverride();
    registerFrictionReportCommand(program);
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await program.parseAsync([
        'node',
        'engram',
        'friction-report',
        '--no-progress',
        '--data-dir',
        dataDir,
        '--until',
        new Date(until).toISOString(),
        '--min-sessions',
        '1',
        '--min-events',
        '1',
        '--out',
        out,
        ...args,
      ]);
      return stderr.mock.calls.map((call) => String(call[0])).join('\n');
    } finally {
      stderr.mockRestore();
    }
  }

  async function review(
    action: Parameters<typeof runReview>[1],
  ): Promise<{ stdout: string; stderr: string; exitCode: number }> {
    const backend = embeddedReviewBackend(dataDir, { timeoutMs: 2_000 });
    try {
      return await runReview(backend, action, { json: true, by: 'tim' });
    } finally {
      await backend.close();
    }
  }

  async function listed(status: 'all' | 'pending'): Promise<ProposalMessage[]> {
    const run = await review({ kind: 'list', status });
    expect(run.exitCode).toBe(0);
    return (JSON.parse(run.stdout) as { proposals: ProposalMessage[] }).proposals;
  }

  function proposalRecords(): number {
    const log = SqliteEventLog.open({ dataDir });
    try {
      return log.endOffsets(codecs.proposals.topic).reduce((sum, end) => sum + end, 0);
    } finally {
      log.close();
    }
  }

  let lintId = '';
  let correctionId = '';

  beforeAll(async () => {
    const config = parseConfig({});
    const target = await embeddedTarget(config, dataDir);
    try {
      const summary = await runReplay({
        config,
        content: events().join('\n'),
        target,
        errors: new PassThrough(),
      });
      if (summary.rejected !== 0) throw new Error(`${summary.rejected} replay lines rejected`);
    } finally {
      await target.close();
    }
    vi.useFakeTimers({ toFake: ['Date'] });
  }, 60_000);
  afterAll(() => {
    vi.useRealTimers();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    process.exitCode = undefined;
  });

  it('should publish the report’s proposals for review, once however often it runs', async () => {
    vi.setSystemTime(FIRST_REPORT_AT);
    const out = join(dir, 'week-1.json');
    await report(Date.UTC(2026, 11, 8), out, '--format', 'json');
    const first = JSON.parse(readFileSync(out, 'utf8')) as FrictionReport & {
      recurrence: FrictionRecurrence[];
    };
    expect(first.recurrence).toEqual([]);
    const byKind = new Map(first.proposals.map((p) => [p.kind, p]));
    lintId = byKind.get('recurring-failure')?.id ?? byKind.get('tool-misuse')?.id ?? '';
    correctionId = byKind.get('repeated-correction')?.id ?? '';
    expect([lintId, correctionId].sort()).toEqual(['f-20261207-001', 'f-20261207-002']);

    const pending = await listed('pending');
    expect(pending.map((p) => p.proposalId).sort()).toEqual([lintId, correctionId].sort());
    const lint = pending.find((p) => p.proposalId === lintId)!;
    expect(lint).toMatchObject({
      tenantId: 'acme',
      projectId: 'acme/web',
      status: 'pending',
      createdAt: FIRST_REPORT_AT,
      expiresAt: FIRST_REPORT_AT + 7 * DAY,
    });
    expect(lint.text).toContain(`+<!-- engram ${lintId}: `);
    expect(lint.evidenceSessionIds).toEqual(['w1-0', 'w1-1', 'w1-2', 'w1-3']);

    // The same window again, an hour later: same ids, nothing written.
    const written = proposalRecords();
    vi.setSystemTime(FIRST_REPORT_AT + HOUR / 2);
    await report(Date.UTC(2026, 11, 8), join(dir, 'again.json'), '--format', 'json');
    const again = JSON.parse(readFileSync(join(dir, 'again.json'), 'utf8')) as FrictionReport;
    expect(again.proposals.map((p) => p.id).sort()).toEqual([lintId, correctionId].sort());
    expect(proposalRecords()).toBe(written);
    expect(await listed('all')).toHaveLength(2);
  });

  it('should list and approve them over the review gRPC API', async () => {
    vi.setSystemTime(APPROVED_AT);
    const log = SqliteEventLog.open({ dataDir });
    const desk = new ReviewDesk(new SqliteEventLogAdapter(log), codecs, { timeoutMs: 2_000 });
    const url = `127.0.0.1:${await freePort()}`;
    const server = await startReviewServer({ desk, url, logger: false });
    const backend = grpcReviewBackend(url);
    try {
      const run = (action: Parameters<typeof runReview>[1]) =>
        runReview(backend, action, { json: true, tenant: 'acme', by: 'tim' });
      const list = JSON.parse((await run({ kind: 'list', status: 'pending' })).stdout) as {
        proposals: ProposalMessage[];
      };
      expect(list.proposals.map((p) => p.proposalId).sort()).toEqual([lintId, correctionId].sort());
      const served = list.proposals.find((p) => p.proposalId === lintId)!;
      expect(served).toMatchObject({ kind: 'friction', target: 'AGENTS.md', status: 'pending' });
      expect(served.severity).toBeGreaterThan(0);
      expect(served.section).toMatch(/^(recurring-failure|tool-misuse):/);
      // For people: the friction proposals by kind, each with its title, target and severity.
      const text = await runReview(
        backend,
        { kind: 'list', status: 'pending' },
        { tenant: 'acme' },
      );
      expect(text.stdout).toContain('# 2 pending friction proposals');
      expect(text.stdout).toContain('## Friction: repeated-correction');
      const line = text.stdout.split('\n').find((l) => l.includes(lintId)) ?? '';
      expect(line).toMatch(/^- \[ \] `f-20261207-00\d` acme\/web: .*pnpm run lint/);
      expect(line).toMatch(
        /→ AGENTS\.md \(severity [\d.]+\) — 0 memories, \d+ events, sessions w1-0/,
      );
      const approved = await run({ kind: 'approve', id: lintId });
      expect(approved.exitCode).toBe(0);
      expect(JSON.parse(approved.stdout)).toMatchObject({
        changed: true,
        proposal: {
          proposalId: lintId,
          status: 'approved',
          decidedAt: APPROVED_AT,
          decidedBy: 'tim',
        },
      });
      // Again: already so. Edited: refused (a friction change is exact).
      expect(JSON.parse((await run({ kind: 'approve', id: lintId })).stdout)).toMatchObject({
        changed: false,
      });
      const edit = await run({ kind: 'edit', id: correctionId, text: 'something else' });
      expect(edit.exitCode).toBe(REVIEW_EXIT_CODES.invalid);
    } finally {
      await backend.close();
      await server.stop();
      log.close();
    }
  });

  it('should write an approved change as a diff git apply takes, and refuse the rest', async () => {
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: 'pipe' });
    git('init', '-q');
    writeFileSync(join(repo, 'AGENTS.md'), '# Agents\n\nKeep changes small.\n');
    const backend = embeddedReviewBackend(dataDir);
    try {
      const patch = join(dir, 'patch.diff');
      const applied = await runReviewApply(
        backend,
        { kind: 'apply', id: lintId, out: patch, repo },
        {},
      );
      expect(applied).toMatchObject({ exitCode: 0, stderr: '' });
      expect(applied.stdout).toContain(`wrote ${patch}: ${lintId} changes AGENTS.md`);
      git('apply', '--check', patch);
      git('apply', patch);
      const agents = readFileSync(join(repo, 'AGENTS.md'), 'utf8');
      expect(agents.startsWith(`<!-- engram ${lintId}: `)).toBe(true);
      expect(agents).toContain('pnpm run lint');
      expect(agents.endsWith('# Agents\n\nKeep changes small.\n')).toBe(true);

      const refused = async (id: string) =>
        runReviewApply(backend, { kind: 'apply', id, out: join(dir, 'no.diff'), repo }, {});
      expect(await refused('f-20991231-001')).toMatchObject({
        exitCode: REVIEW_EXIT_CODES['not-found'],
        stderr: expect.stringContaining('no proposal f-20991231-001') as string,
      });
      expect(await refused(correctionId)).toMatchObject({
        exitCode: REVIEW_EXIT_CODES.conflict,
        stderr: expect.stringContaining(`${correctionId} is pending`) as string,
      });
      expect(existsSync(join(dir, 'no.diff'))).toBe(false);
    } finally {
      await backend.close();
    }
  });

  it('should apply through the command line, creating the file, and refuse a memory target', async () => {
    const repo = join(dir, 'empty-repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q'], { cwd: repo });
    // An approved stale-memory proposal: its change is a memory to retire, not a file.
    const [stale] = buildFrictionReport({
      window: { from: WEEK_1, to: Date.UTC(2026, 11, 8) },
      scope: { kind: 'all' },
      totals: { sessions: 4, events: 30 },
      findings: [
        {
          kind: 'stale-memory',
          key: 'stale-1',
          subject: null,
          alsoSeenAs: [],
          tenantId: 'acme',
          projectIds: ['acme/web'],
          title: 'Stale fact still injected',
          summary: 'Served after it went stale.',
          sessions: 1,
          firstAt: WEEK_1,
          lastAt: WEEK_1,
          cost: { occurrences: 1, measuredMinutes: 0, tokens: 0, estimatedMinutes: 2 },
          evidence: { sessionIds: ['w1-0'], eventIds: [], memoryIds: ['m-stale'] },
          agentIds: ['codex'],
          proposedLines: [],
          memoryId: 'm-stale',
          confidence: 0.6,
        },
      ],
      timeline: [],
      maxEvidence: 10,
    }).proposals;
    const decided = decideFrictionProposal(
      frictionProposalRecord(stale, 'f-20261207-099', APPROVED_AT),
      'approve',
      APPROVED_AT,
      'tim',
    );
    if (!decided.ok) throw new Error(decided.message);
    const log = SqliteEventLog.open({ dataDir });
    try {
      await new SqliteEventLogAdapter(log).publish(codecs.proposals, [
        { type: 'Proposal', ...decided.record },
      ]);
    } finally {
      log.close();
    }
    const engram = async (...args: string[]) => {
      const program = new Command().exitOverride();
      registerReviewCommand(program);
      const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
      const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        await program.parseAsync([
          'node',
          'engram',
          'review',
          'apply',
          ...args,
          '--data-dir',
          dataDir,
        ]);
        return { exitCode: process.exitCode ?? 0, stderr: err.mock.calls.join('\n') };
      } finally {
        out.mockRestore();
        err.mockRestore();
        process.exitCode = undefined;
      }
    };
    const patch = join(dir, 'create.diff');
    expect(await engram(lintId, '--out', patch, '--repo', repo)).toEqual({
      exitCode: 0,
      stderr: '',
    });
    expect(readFileSync(patch, 'utf8')).toMatch(/^--- \/dev\/null\n\+\+\+ b\/AGENTS\.md\n/);
    execFileSync('git', ['apply', '--check', patch], { cwd: repo, stdio: 'pipe' });
    execFileSync('git', ['apply', patch], { cwd: repo, stdio: 'pipe' });
    expect(readFileSync(join(repo, 'AGENTS.md'), 'utf8')).toContain('pnpm run lint');
    const memory = await engram('f-20261207-099', '--out', join(dir, 'memory.diff'));
    expect(memory.exitCode).toBe(REVIEW_EXIT_CODES.invalid);
    expect(memory.stderr).toContain('f-20261207-099 is not a file change (a memory to retire)');
    expect(existsSync(join(dir, 'memory.diff'))).toBe(false);
  });

  it('should expire an unreviewed proposal after 7 days and keep it listed', async () => {
    vi.setSystemTime(FIRST_REPORT_AT + 7 * DAY);
    const all = await listed('all');
    expect(all.find((p) => p.proposalId === correctionId)).toMatchObject({
      status: 'expired',
      decidedAt: FIRST_REPORT_AT + 7 * DAY,
    });
    expect(all.find((p) => p.proposalId === lintId)).toMatchObject({ status: 'approved' });
    const late = await review({ kind: 'approve', id: correctionId });
    expect(late.exitCode).toBe(REVIEW_EXIT_CODES.conflict);
    expect(late.stderr).toContain('already expired');
  });

  it('should say in the next report, in every format, whether approved frictions recurred', async () => {
    vi.setSystemTime(SECOND_REPORT_AT);
    const stem = join(dir, 'week-2');
    await report(Date.UTC(2026, 11, 15), `${stem}.md`, '--format', 'md,json,html');
    const json = JSON.parse(readFileSync(`${stem}.json`, 'utf8')) as {
      recurrence: FrictionRecurrence[];
    };
    expect(json.recurrence).toEqual([
      expect.objectContaining({
        proposalId: lintId,
        approvedAt: APPROVED_AT,
        recurred: true,
        sessions: 2,
        occurrences: 2,
        lastSeenAt: WEEK_2 + DAY + 60_000,
        evidence: expect.objectContaining({ sessionIds: ['w2-0', 'w2-1'] }) as object,
      }),
      // The retired memory was not served again: it held.
      expect.objectContaining({
        proposalId: 'f-20261207-099',
        kind: 'stale-memory',
        target: 'memory',
        recurred: false,
        sessions: 0,
        lastSeenAt: null,
      }),
    ]);
    const md = readFileSync(`${stem}.md`, 'utf8');
    expect(md).toContain('## Approved proposals: did the friction recur?');
    expect(md).toContain('1 of 2 approved proposals recurred since their approval');
    expect(md).toMatch(
      new RegExp(
        `\\| \`${lintId}\` \\| [a-z-]+ \\| 2026-12-08 10:00 \\| \\*\\*yes\\*\\* \\| 2 \\| 2 \\|`,
      ),
    );
    const html = readFileSync(`${stem}.html`, 'utf8');
    expect(html).toMatch(/<h2 id="recurrence">[^<]*<\/h2>/);
    expect(html).toContain(`<tr class="recurred"><td><code>${lintId}</code></td>`);
    expect(html.indexOf('id="recurrence"')).toBeLessThan(html.indexOf('</body>'));
  });
});
