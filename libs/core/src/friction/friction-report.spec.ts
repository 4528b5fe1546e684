import { describe, expect, it } from 'vitest';
import {
  buildFrictionReport,
  clusterFindings,
  frictionProposalId,
  frictionShortfall,
} from './friction-report';
import { frictionFinding } from './friction-finding.fixture';
import type { FrictionFinding } from './friction-types';
import { renderFrictionHtml } from './render-html';
import { renderFrictionMarkdown } from './render-markdown';

const window = { from: Date.UTC(2026, 10, 20), to: Date.UTC(2026, 10, 27) };

const finding = frictionFinding;

describe('frictionShortfall', () => {
  it('should refuse below the minimum and say how much is missing', () => {
    const settings = { minSessions: 10, minEvents: 500 };
    const sessionsShort = frictionShortfall({ sessions: 4, events: 800 }, settings);
    expect(sessionsShort?.missing).toEqual({ sessions: 6, events: 0 });
    expect(sessionsShort?.message).toContain('the window has 4 sessions (6 more needed);');
    expect(frictionShortfall({ sessions: 4, events: 100 }, settings)?.message).toContain(
      '4 sessions (6 more needed) and 100 events (400 more needed)',
    );
    expect(frictionShortfall({ sessions: 10, events: 500 }, settings)).toBeNull();
  });
});

describe('proposals', () => {
  it('should number proposals by severity with the day the window ends on', () => {
    const report = buildFrictionReport({
      window,
      scope: { kind: 'all' },
      totals: { sessions: 20, events: 1_000 },
      findings: [
        finding({ key: 'small', sessions: 3 }),
        finding({ key: 'big', sessions: 9, kind: 'repeated-correction' }),
      ],
      timeline: [],
      maxEvidence: 10,
    });
    expect(report.proposals.map((p) => [p.id, p.key, p.severity.score, p.severity.level])).toEqual([
      ['f-20261126-001', 'big', 54, 'medium'],
      ['f-20261126-002', 'small', 18, 'medium'],
    ]);
    expect(frictionProposalId(window, 12)).toBe('f-20261126-012');
  });

  it('should give the same ids whatever the order of the findings', () => {
    const findings = [
      finding({ key: 'a' }),
      finding({ key: 'b' }),
      finding({ key: 'c', kind: 'tool-misuse' }),
    ];
    const build = (list: FrictionFinding[]) =>
      buildFrictionReport({
        window,
        scope: { kind: 'all' },
        totals: { sessions: 20, events: 1_000 },
        findings: list,
        timeline: [],
        maxEvidence: 10,
      }).proposals.map((p) => `${p.id}=${p.key}`);
    expect(build([...findings].reverse())).toEqual(build(findings));
    expect(build(findings)).toEqual(['f-20261126-001=a', 'f-20261126-002=b', 'f-20261126-003=c']);
  });

  it('should target CLAUDE.md only when every session was Claude Code, and write a patch', () => {
    const [claude, mixed, memory] = buildFrictionReport({
      window,
      scope: { kind: 'all' },
      totals: { sessions: 20, events: 1_000 },
      findings: [
        finding({
          key: 'a',
          sessions: 5,
          agentIds: ['claude-code'],
          proposedLines: ['- Use pnpm.'],
        }),
        finding({ key: 'b', sessions: 4, agentIds: ['claude-code', 'codex'] }),
        finding({
          key: 'c',
          sessions: 1,
          kind: 'stale-memory',
          memoryId: 'm-1',
          proposedLines: [],
        }),
      ],
      timeline: [],
      maxEvidence: 10,
    }).proposals;
    expect(claude.target).toBe('CLAUDE.md');
    expect(claude.change).toEqual({
      kind: 'file',
      file: 'CLAUDE.md',
      lines: ['<!-- engram f-20261126-001: recurring-failure -->', '- Use pnpm.', ''],
      patch:
        '--- a/CLAUDE.md\n+++ b/CLAUDE.md\n@@ -0,0 +1,3 @@\n' +
        '+<!-- engram f-20261126-001: recurring-failure -->\n+- Use pnpm.\n+\n',
    });
    expect(mixed.target).toBe('AGENTS.md');
    expect(memory).toMatchObject({ target: 'memory', change: { kind: 'memory', memoryId: 'm-1' } });
  });

  it('should merge findings about the same subject into one cluster', () => {
    const merged = clusterFindings(
      [
        finding({
          key: 'fail',
          subject: 'npm test',
          sessions: 6,
          evidence: { sessionIds: ['s-1'], eventIds: ['e-1'], memoryIds: [] },
        }),
        finding({
          key: 'loop',
          kind: 'tool-misuse',
          subject: 'npm test',
          sessions: 4,
          cost: { occurrences: 9, measuredMinutes: 0, tokens: 0, estimatedMinutes: 18 },
          evidence: { sessionIds: ['s-2'], eventIds: ['e-2'], memoryIds: [] },
          proposedLines: ['- another line'],
        }),
        finding({ key: 'alone', subject: 'other' }),
      ],
      10,
    );
    // The costliest (the loop: 18 min against 6) leads; sessions are the most any member saw.
    expect(merged.map((f) => [f.key, f.kind, f.alsoSeenAs, f.sessions])).toEqual([
      ['loop', 'tool-misuse', ['recurring-failure'], 6],
      ['alone', 'recurring-failure', [], 3],
    ]);
    expect(merged[0].evidence.eventIds).toEqual(['e-1', 'e-2']);
    expect(merged[0].proposedLines).toEqual(['- another line', '- a line']);
  });
});

describe('rendering', () => {
  const report = buildFrictionReport({
    window,
    scope: { kind: 'project', projectId: 'acme/api', tenantId: 'acme' },
    totals: { sessions: 20, events: 1_000 },
    findings: [
      finding({
        key: 'a',
        title: 'curl https://example.com/x fails <b>',
        summary: 'see http://internal/run & retry',
      }),
    ],
    timeline: [
      { day: '2026-11-20', kind: 'recurring-failure', count: 3 },
      { day: '2026-11-22', kind: 'repeated-correction', count: 1 },
    ],
    maxEvidence: 10,
  });

  it('should write a self-contained HTML page with SVG charts and escaped text', () => {
    const html = renderFrictionHtml(report);
    expect(html).toContain('<svg');
    expect(html.match(/<svg/g)).toHaveLength(3);
    expect(html).toContain('fill="#d1495b"');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script|<link|src=/i);
    expect(html).toContain('&lt;b&gt;');
    expect(html).toContain('https&#58;&#47;&#47;example.com');
  });

  it("should write Markdown with a summary table and each proposal's change", () => {
    const markdown = renderFrictionMarkdown(report);
    expect(markdown).toContain('# Friction report: project acme/api (tenant acme)');
    expect(markdown).toContain('Window 2026-11-20 – 2026-11-26 · 20 sessions · 1000 events');
    expect(markdown).toContain('## f-20261126-001: curl');
    expect(markdown).toContain('```diff\n--- a/AGENTS.md');
  });
});
