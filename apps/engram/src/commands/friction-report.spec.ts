import { parseConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import type { FrictionReport } from '@engram/core';
import Database from 'better-sqlite3';
import { Command } from 'commander';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { v5 as uuidv5 } from 'uuid';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { recordedStream } from '../../../../test/integration/support/recorded-sessions';
import { registerFrictionReportCommand } from './friction-report.command';
import { runReplay } from './replay.command';
import { embeddedTarget } from './replay-targets';

// `engram friction-report` end to end in embedded mode: recorded sessions, with frictions
// planted in some of them (a correction said again and again, a command rerun while it keeps
// failing) and noise in others, replayed into a data dir; the command reads events.db with SQL
// and writes the three formats.

const NAMESPACE = '5f0e2a4c-1b7d-5c3e-9a8f-2d6b4e1c7a93';
const UNTIL = '2026-11-21T00:00:00Z';
const NOISE_CORRECTIONS = [
  'Actually, the staging cluster runs on Tuesdays only.',
  "No, that's the wrong spreadsheet for quarterly invoices.",
  'Wait, rename the helper before merging the branch.',
  'Actually, the logo colour must match the brand guide.',
  'No, the timezone of cron jobs is UTC, not local.',
  'Wait, postgres vacuum settings belong in terraform.',
  'Actually, keyboard shortcuts are documented in the wiki.',
  'No, the mobile build signs with the release keystore.',
];
const NOISE_ERRORS = [
  'red',
  'green',
  'blue',
  'cyan',
  'pink',
  'gold',
  'teal',
  'navy',
  'lime',
  'plum',
  'rust',
  'sand',
];

function planted(): { lines: string[] } {
  const stream = recordedStream(12);
  const extraPrompts: Typed<'PromptSubmitted'>[] = [];
  const extraCalls: Typed<'ToolCallObserved'>[] = [];
  const base = (source: { sessionId: string; tenantId: string; projectId: string }) => ({
    tenantId: source.tenantId,
    projectId: source.projectId,
    sessionId: source.sessionId,
    agentId: 'codex',
    userId: 'dev-x',
    schemaVersion: 1,
  });
  for (let s = 0; s < 12; s += 1) {
    const last = stream.prompts.filter((p) => p.sessionId === `recorded-session-${s}`).at(-1)!;
    const at = last.timestamp + 30_000;
    // Planted correction: sessions 0, 3, 6, 9 (all acme/repo-0), in slightly different words;
    // the others get one-off corrections about unrelated things (noise).
    const text =
      s % 3 !== 0
        ? NOISE_CORRECTIONS[s % NOISE_CORRECTIONS.length]
        : s % 2 === 0
          ? "No, don't use npm in this repository. We use pnpm for installs and scripts."
          : 'No, stop using npm in this repository: use pnpm for installs and scripts.';
    extraPrompts.push({
      type: 'PromptSubmitted',
      ...base(last),
      eventId: uuidv5(`correction:${s}`, NAMESPACE),
      timestamp: at,
      promptId: last.promptId + 1,
      source: 'user',
      channel: 'cli',
      channelKind: 'explicit',
      explicitThreadId: last.sessionId,
      text,
      methodology: null,
      methodologyPhase: null,
      workUnitRef: null,
      parentEpisodeId: null,
    });
    // Planted retry loop: sessions 1, 4, 7, 10 (all acme/repo-1) rerun a failing lint 3 times.
    for (let attempt = 0; attempt < (s % 3 === 1 ? 3 : 1); attempt += 1) {
      extraCalls.push({
        type: 'ToolCallObserved',
        ...base(last),
        eventId: uuidv5(`lint:${s}:${attempt}`, NAMESPACE),
        timestamp: at + 1_000 * (attempt + 1),
        promptId: last.promptId,
        stepIndex: 10 + attempt,
        toolName: 'Bash',
        filePaths: [],
        command: s % 3 === 1 ? 'pnpm run lint' : `./scripts/once-${s}.sh`,
        argsJson: '{}',
        outcome: 'error',
        // Noise sessions fail with messages of their own (no recurring pattern).
        errorMessage:
          s % 3 === 1
            ? `ESLint found ${attempt + 2} problems in /tmp/build-${s}/src/app.ts`
            : `segfault in unit ${NOISE_ERRORS[s]} worker`,
        durationMs: 30_000,
        tokensUsed: 500,
        mcp: false,
      });
    }
  }
  const events = [
    ...stream.prompts,
    ...extraPrompts,
    ...stream.toolCalls,
    ...extraCalls,
    ...stream.lifecycle,
  ];
  return { lines: events.map((e) => JSON.stringify(e)) };
}

/** The event and session ids in the data dir's event log. */
function storedIds(dataDir: string): { eventIds: Set<string>; sessionIds: Set<string> } {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT value ->> '$.eventId' AS event, value ->> '$.sessionId' AS session FROM records
         WHERE typeof(value) = 'text'`,
      )
      .all() as { event: string; session: string }[];
    return {
      eventIds: new Set(rows.map((row) => row.event)),
      sessionIds: new Set(rows.map((row) => row.session)),
    };
  } finally {
    db.close();
  }
}

async function engram(...args: string[]): Promise<void> {
  const program = new Command().exitOverride();
  registerFrictionReportCommand(program);
  await program.parseAsync(['node', 'engram', 'friction-report', '--no-progress', ...args]);
}

describe('engram friction-report (embedded)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-friction-'));
  const data = planted();

  beforeAll(async () => {
    const config = parseConfig({});
    const target = await embeddedTarget(config, dir);
    try {
      const summary = await runReplay({
        config,
        content: data.lines.join('\n'),
        target,
        errors: new PassThrough(),
      });
      if (summary.rejected !== 0) throw new Error(`${summary.rejected} replay lines rejected`);
    } finally {
      await target.close();
    }
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  it('should find the planted frictions, with evidence ids that resolve, in md, json and html', async () => {
    const out = join(dir, 'report');
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await engram('--data-dir', dir, '--until', UNTIL, '--format', 'json,html,md', '--out', out);
    const report = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as FrictionReport;
    const stored = storedIds(dir);

    expect(report.totals.sessions).toBe(12);
    const byKind = (kind: string) => report.proposals.filter((p) => p.kind === kind);
    // The recorded sessions' test fails in every session with "Expected 2 received 1".
    const failures = byKind('recurring-failure');
    // The planted lint loop is a recurring failure too (the same error in 4 sessions): one
    // cluster, one proposal, seen by both detectors.
    expect(failures.map((p) => p.title)).toEqual([
      'Read `npm test` keeps failing with "Expected <n> received <n>"',
      'Bash `pnpm run lint` keeps failing with "ESLint found <n> problems in <path>"',
    ]);
    expect(failures[0]).toMatchObject({ sessions: 12, alsoSeenAs: [] });
    expect(failures[0].projectIds).toEqual(['acme/repo-0', 'acme/repo-1', 'acme/repo-2']);
    expect(failures[1]).toMatchObject({
      sessions: 4,
      projectIds: ['acme/repo-1'],
      alsoSeenAs: ['tool-misuse'],
    });
    expect(failures[1].cost).toMatchObject({ occurrences: 12, tokens: 6_000, measuredMinutes: 6 });
    expect(failures[1].proposedLines.join('\n')).toContain('read its error and change something');
    // `npm test` fails once per task, three tasks a session: no retry loop (not one user turn).
    expect(byKind('tool-misuse')).toEqual([]);

    const corrections = byKind('repeated-correction');
    expect(corrections).toHaveLength(1);
    expect(corrections[0].sessions).toBe(4);
    expect(corrections[0].projectIds).toEqual(['acme/repo-0']);
    expect(corrections[0].change).toMatchObject({ kind: 'file', file: 'AGENTS.md' });
    expect(corrections[0].change.kind === 'file' && corrections[0].change.patch).toContain('pnpm');

    // Noise (one-off corrections, one-off failures) makes no proposal.
    expect(report.proposals).toHaveLength(3);
    for (const proposal of report.proposals) {
      expect(proposal.id).toMatch(/^f-20261120-\d{3}$/);
      expect(proposal.evidence.eventIds.length).toBeGreaterThan(0);
      // Every evidence id names an event (and session) stored in the data dir's event log.
      for (const id of proposal.evidence.eventIds) expect(stored.eventIds.has(id)).toBe(true);
      for (const id of proposal.evidence.sessionIds) expect(stored.sessionIds.has(id)).toBe(true);
    }
    expect(report.proposals.map((p) => p.id)).toEqual([
      'f-20261120-001',
      'f-20261120-002',
      'f-20261120-003',
    ]);
    expect(report.timeline.length).toBeGreaterThan(0);

    const html = readFileSync(`${out}.html`, 'utf8');
    expect(html).toContain('<svg');
    expect(html).toContain('<rect');
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/<script|<link|src=/i);
    const markdown = readFileSync(`${out}.md`, 'utf8');
    for (const proposal of report.proposals) expect(markdown).toContain(`## ${proposal.id}: `);
  });

  it('should give the same proposals and ids for the same data and window', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const first = join(dir, 'first.json');
    const second = join(dir, 'second.json');
    await engram('--data-dir', dir, '--until', UNTIL, '--format', 'json', '--out', first);
    await engram('--data-dir', dir, '--until', UNTIL, '--format', 'json', '--out', second);
    expect(readFileSync(second, 'utf8')).toBe(readFileSync(first, 'utf8'));
  });

  it('should scope to one project', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const out = join(dir, 'repo-1.json');
    await engram(
      '--data-dir',
      dir,
      '--until',
      UNTIL,
      '--project',
      'acme/repo-1',
      '--min-sessions',
      '3',
      '--format',
      'json',
      '--out',
      out,
    );
    const report = JSON.parse(readFileSync(out, 'utf8')) as FrictionReport;
    expect(report.totals.sessions).toBe(4);
    expect(report.proposals.map((p) => p.kind).sort()).toEqual([
      'recurring-failure',
      'recurring-failure',
    ]);
    expect(report.proposals.flatMap((p) => p.projectIds)).toEqual(['acme/repo-1', 'acme/repo-1']);
  });

  it('should refuse below the minimum of data and say how much is missing', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => errors.push(line));
    const out = join(dir, 'refused.json');
    await engram(
      '--data-dir',
      dir,
      '--until',
      UNTIL,
      '--min-sessions',
      '20',
      '--format',
      'json',
      '--out',
      out,
    );
    expect(process.exitCode).toBe(3);
    expect(errors.join('\n')).toContain('12 sessions (8 more needed)');
    // A window with nothing in it: everything is missing.
    errors.length = 0;
    await engram(
      '--data-dir',
      dir,
      '--until',
      '2026-12-31T00:00:00Z',
      '--format',
      'json',
      '--out',
      out,
    );
    expect(errors.join('\n')).toContain(
      '0 sessions (5 more needed) and 0 events (100 more needed)',
    );
  });
});
