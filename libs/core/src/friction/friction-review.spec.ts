import type { Proposal } from '@engram/contracts';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  approvedFrictionIn,
  frictionRecurrence,
  sameFriction,
  type ApprovedFriction,
} from './friction-recurrence';
import { frictionFinding } from './friction-finding.fixture';
import { frictionPatch, frictionPatchTarget } from './friction-patch';
import { buildFrictionReport } from './friction-report';
import {
  decideFrictionProposal,
  frictionRecordAt,
  frictionStatusAt,
  isFrictionProposalId,
  parseFrictionSection,
  upsertFrictionProposals,
} from './friction-review';
import type { FrictionFinding, FrictionProposal } from './friction-types';
import { recurrenceMarkdown, withRecurrenceHtml } from './render-recurrence';

const DAY = 86_400_000;
const WINDOW = { from: Date.UTC(2026, 10, 20), to: Date.UTC(2026, 10, 27) };
const NOW = Date.UTC(2026, 10, 27, 8);

function finding(overrides: Partial<FrictionFinding>): FrictionFinding {
  return frictionFinding({
    evidence: { sessionIds: ['s-1', 's-2'], eventIds: ['e-1'], memoryIds: [] },
    proposedLines: ['- Run `npm ci` before `npm test`.'],
    ...overrides,
  });
}

function proposalsOf(findings: FrictionFinding[]): FrictionProposal[] {
  return buildFrictionReport({
    window: WINDOW,
    scope: { kind: 'all' },
    totals: { sessions: 20, events: 1_000 },
    findings,
    timeline: [],
    maxEvidence: 10,
  }).proposals;
}

const FINDINGS = [
  finding({ key: 'fail', sessions: 5 }),
  finding({
    key: 'stale',
    kind: 'stale-memory',
    memoryId: 'm-1',
    title: 'Stale fact still injected',
    evidence: { sessionIds: ['s-3'], eventIds: [], memoryIds: ['m-1'] },
  }),
];

describe('upsertFrictionProposals', () => {
  it('should give new proposals the window day’s next ids, pending for 7 days', () => {
    const other: Proposal = {
      ...upsertFrictionProposals(
        proposalsOf([finding({ key: 'x', tenantId: 'zeta' })]),
        [],
        NOW,
        WINDOW.to,
      ).records[0],
    };
    expect(other.proposalId).toBe('f-20261126-001');
    const { records, ids, statuses } = upsertFrictionProposals(
      proposalsOf(FINDINGS),
      [other],
      NOW,
      WINDOW.to,
    );
    expect(records.map((r) => [r.proposalId, r.status, r.target, r.section])).toEqual([
      ['f-20261126-002', 'pending', 'AGENTS.md', 'recurring-failure:fail'],
      ['f-20261126-003', 'pending', 'memory', 'stale-memory:stale'],
    ]);
    expect(records[0]).toMatchObject({
      kind: 'friction',
      tenantId: 'acme',
      projectId: 'acme/api',
      createdAt: NOW,
      expiresAt: NOW + 7 * DAY,
      severity: 30,
      evidenceSessionIds: ['s-1', 's-2'],
    });
    expect(records[0].text).toContain('+<!-- engram f-20261126-002: recurring-failure -->');
    expect(records[1].text).toBe('retire memory m-1: It failed.');
    expect([...ids]).toEqual([
      ['f-20261126-001', 'f-20261126-002'],
      ['f-20261126-002', 'f-20261126-003'],
    ]);
    expect([...statuses.values()]).toEqual(['pending', 'pending']);
  });

  it('should be an idempotent upsert that keeps decisions', () => {
    const proposals = proposalsOf(FINDINGS);
    const first = upsertFrictionProposals(proposals, [], NOW, WINDOW.to).records;
    // The same report again, later: nothing to write, the same ids.
    const again = upsertFrictionProposals(proposals, first, NOW + DAY, WINDOW.to);
    expect(again.records).toEqual([]);
    expect([...again.ids.values()]).toEqual(first.map((r) => r.proposalId));
    // One approved, then the report re-run with more evidence: the decision stays.
    const decided = decideFrictionProposal(first[0], 'approve', NOW + DAY, 'tim');
    expect(decided.ok && decided.changed).toBe(true);
    const approved = decided.record;
    const grown = proposalsOf([finding({ key: 'fail', sessions: 9 }), FINDINGS[1]]);
    const rerun = upsertFrictionProposals(grown, [approved, first[1]], NOW + DAY, WINDOW.to);
    expect(rerun.statuses.get('f-20261126-001')).toBe('approved');
    // The pending one is not rewritten either, even with other figures: a rewrite could land
    // after a reviewer's decision; the report itself shows the new figures.
    expect(rerun.records).toEqual([]);
    const grownBoth = upsertFrictionProposals(
      proposalsOf([finding({ key: 'fail', sessions: 9 }), { ...FINDINGS[1], sessions: 4 }]),
      [approved, first[1]],
      NOW + DAY,
      WINDOW.to,
    );
    expect(grownBoth.records).toEqual([]);
    expect([...grownBoth.statuses.values()].sort()).toEqual(['approved', 'pending']);
  });

  it('should expire after 7 days, keep the expired one, and propose it again on a later day', () => {
    const [record] = upsertFrictionProposals(
      proposalsOf([FINDINGS[0]]),
      [],
      NOW,
      WINDOW.to,
    ).records;
    expect(frictionStatusAt(record, NOW + 7 * DAY - 1)).toBe('pending');
    expect(frictionStatusAt(record, NOW + 7 * DAY)).toBe('expired');
    const expired = frictionRecordAt(record, NOW + 8 * DAY);
    expect(expired).toMatchObject({ status: 'expired', decidedAt: NOW + 7 * DAY });
    // Written down by whoever sees it first: the same record (same eventId) from anyone.
    expect(frictionRecordAt(record, NOW + 9 * DAY)).toEqual(expired);
    // The same window re-run after expiry: the expiry is written, no new proposal.
    const sameWindow = upsertFrictionProposals(
      proposalsOf([FINDINGS[0]]),
      [record],
      NOW + 8 * DAY,
      WINDOW.to,
    );
    expect(sameWindow.records).toEqual([expired]);
    expect(sameWindow.statuses.get('f-20261126-001')).toBe('expired');
    // A later window still finding it: proposed again; the expired one stays as it was.
    const later = { from: WINDOW.from + 14 * DAY, to: WINDOW.to + 14 * DAY };
    const next = upsertFrictionProposals(
      proposalsOf([FINDINGS[0]]),
      [expired],
      NOW + 14 * DAY,
      later.to,
    );
    expect(next.records.map((r) => [r.proposalId, r.status])).toEqual([
      ['f-20261210-001', 'pending'],
    ]);
  });
});

describe('decideFrictionProposal', () => {
  const [record] = upsertFrictionProposals(proposalsOf([FINDINGS[0]]), [], NOW, WINDOW.to).records;

  it('should approve or reject once, and refuse edits, other decisions and late ones', () => {
    const rejected = decideFrictionProposal(record, 'reject', NOW + DAY, 'ann');
    expect(rejected).toMatchObject({
      ok: true,
      changed: true,
      record: { status: 'rejected', decidedAt: NOW + DAY, userId: 'ann' },
    });
    if (!rejected.ok) throw new Error('rejected');
    expect(rejected.record.eventId).not.toBe(record.eventId);
    expect(decideFrictionProposal(rejected.record, 'reject', NOW + 2 * DAY, 'bob')).toMatchObject({
      ok: true,
      changed: false,
      record: { userId: 'ann' },
    });
    expect(decideFrictionProposal(rejected.record, 'approve', NOW + 2 * DAY, 'bob')).toMatchObject({
      ok: false,
      code: 'conflict',
    });
    expect(decideFrictionProposal(record, 'edit-and-approve', NOW, 'bob')).toMatchObject({
      ok: false,
      code: 'invalid',
    });
    const late = decideFrictionProposal(record, 'approve', NOW + 7 * DAY, 'bob');
    expect(late).toMatchObject({ ok: false, code: 'conflict', record: { status: 'expired' } });
  });

  it('should name friction ids and sections', () => {
    expect(isFrictionProposalId('f-20261126-001')).toBe(true);
    expect(isFrictionProposalId('p-20261126-001')).toBe(false);
    expect(parseFrictionSection('tool-misuse:abc')).toEqual({
      kind: 'tool-misuse',
      clusterId: 'abc',
    });
    expect(parseFrictionSection('Hard Rules')).toBeNull();
    expect(parseFrictionSection(null)).toBeNull();
  });
});

describe('recurrence since approval', () => {
  const records = upsertFrictionProposals(
    proposalsOf([
      finding({ key: 'fail', subject: 'npm-test' }),
      finding({
        key: 'said-1',
        kind: 'repeated-correction',
        proposedLines: ['- Use pnpm, not npm, in this repository.'],
      }),
    ]),
    [],
    NOW,
    WINDOW.to,
  ).records;
  const approve = (record: Proposal, at: number): Proposal => {
    const decision = decideFrictionProposal(record, 'approve', at, 'tim');
    if (!decision.ok) throw new Error(decision.message);
    return decision.record;
  };
  const approvedRecords = records.map((r) => approve(r, NOW + DAY));

  it('should list the approved proposals of the scope only', () => {
    expect(approvedFrictionIn(records, { kind: 'all' })).toEqual([]);
    const approved = approvedFrictionIn(approvedRecords, { kind: 'all' });
    expect(approved.map((a) => [a.proposalId, a.kind, a.clusterId, a.approvedAt])).toEqual([
      ['f-20261126-001', 'recurring-failure', 'npm-test', NOW + DAY],
      ['f-20261126-002', 'repeated-correction', 'said-1', NOW + DAY],
    ]);
    expect(approved[1].lines).toEqual(['- Use pnpm, not npm, in this repository.']);
    expect(approvedFrictionIn(approvedRecords, { kind: 'tenant', tenantId: 'zeta' })).toEqual([]);
    expect(
      approvedFrictionIn(approvedRecords, {
        kind: 'project',
        projectId: 'acme/api',
        tenantId: null,
      }),
    ).toHaveLength(2);
  });

  it('should count the same cluster found after approval, and nothing else', () => {
    const [failure, correction] = approvedFrictionIn(approvedRecords, { kind: 'all' });
    const since = proposalsOf([
      // The same failing command, now led by the retry-loop detector: same subject.
      finding({ key: 'other-key', kind: 'tool-misuse', subject: 'npm-test', sessions: 2 }),
      // The correction said again in other words, in a cluster named after another event.
      finding({
        key: 'said-2',
        kind: 'repeated-correction',
        proposedLines: ['- We use pnpm here, stop running npm.'],
        sessions: 1,
        cost: { occurrences: 1, measuredMinutes: 0, tokens: 0, estimatedMinutes: 2 },
        evidence: { sessionIds: ['s-9'], eventIds: ['e-9'], memoryIds: [] },
      }),
      finding({ key: 'unrelated', subject: 'cargo-build' }),
    ]);
    const checkedUntil = WINDOW.to;
    const options = { correctionSimilarity: 0.4, maxEvidence: 10 };
    expect(frictionRecurrence(failure, since, checkedUntil, options)).toMatchObject({
      proposalId: 'f-20261126-001',
      recurred: true,
      sessions: 2,
      occurrences: 3,
    });
    expect(frictionRecurrence(correction, since, checkedUntil, options)).toMatchObject({
      recurred: true,
      sessions: 1,
      occurrences: 1,
      evidence: { sessionIds: ['s-9'], eventIds: ['e-9'] },
    });
    const held = frictionRecurrence(failure, [], checkedUntil, options);
    expect(held).toMatchObject({ recurred: false, sessions: 0, occurrences: 0, lastSeenAt: null });
    const otherTenant: ApprovedFriction = { ...failure, tenantId: 'zeta' };
    expect(sameFriction(otherTenant, since[0], 0.4)).toBe(false);

    const md = recurrenceMarkdown([
      frictionRecurrence(failure, since, checkedUntil, options),
      held,
    ]);
    expect(md).toContain('## Approved proposals: did the friction recur?');
    expect(md).toContain(
      '| `f-20261126-001` | recurring-failure | 2026-11-28 08:00 | **yes** | 2 | 3 |',
    );
    expect(md).toContain('1 of 2 approved proposals recurred');
    const html = withRecurrenceHtml('<html><body><p>x</p></body></html>', [held]);
    expect(html).toMatch(/<p>x<\/p><h2 id="recurrence">.*<td>no<\/td>.*<\/table>\n<\/body>/s);
  });
});

describe('frictionPatch (engram review apply)', () => {
  const [pending, memory] = upsertFrictionProposals(
    proposalsOf(FINDINGS),
    [],
    NOW,
    WINDOW.to,
  ).records;
  const approve = (record: Proposal): Proposal => {
    const decision = decideFrictionProposal(record, 'approve', NOW + DAY, 'tim');
    if (!decision.ok) throw new Error(decision.message);
    return decision.record;
  };
  const INSERTED =
    '<!-- engram f-20261126-001: recurring-failure -->\n- Run `npm ci` before `npm test`.\n\n';

  function gitApply(files: Record<string, string>, patch: string): Record<string, string> {
    const repo = mkdtempSync(join(tmpdir(), 'engram-friction-patch-'));
    try {
      const git = (...args: string[]) =>
        execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: 'pipe' });
      git('init', '-q');
      for (const [file, text] of Object.entries(files)) writeFileSync(join(repo, file), text);
      writeFileSync(join(repo, '.patch.diff'), patch);
      git('apply', '--check', '.patch.diff');
      git('apply', '.patch.diff');
      return Object.fromEntries(
        ['AGENTS.md', 'CLAUDE.md']
          .filter((file) => existsSync(join(repo, file)))
          .map((file) => [file, readFileSync(join(repo, file), 'utf8')]),
      );
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  }

  it('should write a diff plain git apply accepts, whatever AGENTS.md holds', () => {
    const approved = approve(pending);
    const cases: [string | null, string][] = [
      [null, INSERTED],
      ['', INSERTED],
      [
        '# Agents\n\nBe kind.\nBe brief.\nTest first.\n',
        INSERTED + '# Agents\n\nBe kind.\nBe brief.\nTest first.\n',
      ],
      ['one line, no newline', INSERTED + 'one line, no newline'],
    ];
    for (const [current, expected] of cases) {
      const made = frictionPatch(approved, current);
      if (!made.ok) throw new Error(made.message);
      expect(made.file).toBe('AGENTS.md');
      const files: Record<string, string> = current === null ? {} : { 'AGENTS.md': current };
      expect(gitApply(files, made.patch)).toEqual({ 'AGENTS.md': expected });
    }
  });

  it('should refuse a proposal that is not approved, or not a file change', () => {
    expect(frictionPatch(pending, null)).toMatchObject({ ok: false, code: 'not-approved' });
    expect(frictionPatch(approve(memory), null)).toMatchObject({ ok: false, code: 'not-a-file' });
    const aimedAt = (file: string) => ({
      ...approve(pending),
      text: approve(pending).text.replace('+++ b/AGENTS.md', `+++ b/${file}`),
    });
    expect(frictionPatchTarget(aimedAt('docs/AGENTS.md'))).toBe('docs/AGENTS.md');
    expect(frictionPatchTarget(aimedAt('../etc/passwd'))).toBeNull();
    expect(frictionPatchTarget(aimedAt('/etc/passwd'))).toBeNull();
    expect(frictionPatchTarget(aimedAt('a/./b'))).toBeNull();
    expect(frictionPatchTarget({ ...approve(pending), kind: 'reflection' })).toBeNull();
  });
});
