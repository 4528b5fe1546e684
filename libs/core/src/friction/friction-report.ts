import { compactDay } from '../distillation/time';
import { round2 } from './friction-findings';
import type { FrictionSettings } from './friction-settings';
import type {
  FrictionChange,
  FrictionDayCount,
  FrictionFinding,
  FrictionProposal,
  FrictionReport,
  FrictionScope,
  FrictionSeverity,
  FrictionTotals,
  FrictionWindow,
  SeverityLevel,
} from './friction-types';

/** How much data is missing for a report (null: enough). */
export interface FrictionShortfall {
  needed: FrictionTotals;
  found: FrictionTotals;
  missing: FrictionTotals;
  message: string;
}

/**
 * The refusal rule (seed 001 phase 4 is "gated on" enough observation data): below
 * `minSessions` sessions or `minEvents` events in the window and scope, a report would be
 * anecdotes. Says how much is missing.
 */
export function frictionShortfall(
  found: FrictionTotals,
  settings: Pick<FrictionSettings, 'minSessions' | 'minEvents'>,
): FrictionShortfall | null {
  const missing = {
    sessions: Math.max(0, settings.minSessions - found.sessions),
    events: Math.max(0, settings.minEvents - found.events),
  };
  if (missing.sessions === 0 && missing.events === 0) return null;
  const parts = [
    ...(missing.sessions > 0
      ? [`${found.sessions} sessions (${missing.sessions} more needed)`]
      : []),
    ...(missing.events > 0 ? [`${found.events} events (${missing.events} more needed)`] : []),
  ];
  return {
    needed: { sessions: settings.minSessions, events: settings.minEvents },
    found,
    missing,
    message:
      `not enough data for a friction report: the window has ${parts.join(' and ')}; ` +
      `it needs at least ${settings.minSessions} sessions and ${settings.minEvents} events ` +
      '(widen --window or the scope, or lower --min-sessions / --min-events)',
  };
}

const HIGH_SEVERITY = 60;
const MEDIUM_SEVERITY = 15;

/** sessions affected × estimated minutes; high from 60, medium from 15. */
export function frictionSeverity(finding: FrictionFinding): FrictionSeverity {
  const score = round2(finding.sessions * finding.cost.estimatedMinutes);
  const level: SeverityLevel =
    score >= HIGH_SEVERITY ? 'high' : score >= MEDIUM_SEVERITY ? 'medium' : 'low';
  return {
    score,
    level,
    sessions: finding.sessions,
    estimatedMinutes: finding.cost.estimatedMinutes,
    tokens: finding.cost.tokens,
  };
}

/** `f-YYYYMMDD-NNN`: the UTC day the window ends on (its last millisecond) and a 1-based rank. */
export function frictionProposalId(window: FrictionWindow, sequence: number): string {
  if (!Number.isInteger(sequence) || sequence < 1) {
    throw new RangeError(`friction sequence must be a positive integer, got ${sequence}`);
  }
  return `f-${compactDay(window.to - 1)}-${String(sequence).padStart(3, '0')}`;
}

/**
 * Findings → proposals: ranked by severity (then kind and key, so equal input and window give
 * equal ids), numbered `f-YYYYMMDD-NNN`, each with its target and exact change. A file finding
 * targets CLAUDE.md when every evidence session was Claude Code's, else AGENTS.md.
 */
export function frictionProposals(
  findings: readonly FrictionFinding[],
  window: FrictionWindow,
): FrictionProposal[] {
  const ranked = findings
    .map((finding) => ({ finding, severity: frictionSeverity(finding) }))
    .sort(
      (a, b) =>
        b.severity.score - a.severity.score ||
        a.finding.kind.localeCompare(b.finding.kind) ||
        a.finding.key.localeCompare(b.finding.key),
    );
  return ranked.map(({ finding, severity }, index) => {
    const id = frictionProposalId(window, index + 1);
    const change = frictionChange(finding, id);
    return {
      ...finding,
      id,
      target: targetOf(finding, change),
      change,
      severity,
    };
  });
}

/** The exact change of a finding proposed under `id` (its marker line names the id). */
export function frictionChange(finding: FrictionFinding, id: string): FrictionChange {
  if (finding.memoryId !== null) {
    return {
      kind: 'memory',
      memoryId: finding.memoryId,
      action: 'retire',
      reason: finding.summary,
    };
  }
  const claudeOnly =
    finding.agentIds.length > 0 && finding.agentIds.every((agent) => agent === 'claude-code');
  if (finding.skill) {
    // Claude Code reads project skills from .claude/skills; other agents get the same file
    // under .agents/skills, named in AGENTS.md by whoever applies it.
    const path = `${claudeOnly ? '.claude' : '.agents'}/skills/${finding.skill.name}/SKILL.md`;
    const lines = [...finding.skill.lines, `<!-- engram ${id}: ${finding.kind} -->`, ''];
    return { kind: 'file', file: path, lines, patch: creationPatch(path, lines) };
  }
  const file = claudeOnly ? 'CLAUDE.md' : 'AGENTS.md';
  const lines = [`<!-- engram ${id}: ${finding.kind} -->`, ...finding.proposedLines, ''];
  return { kind: 'file', file, lines, patch: insertionPatch(file, lines) };
}

/**
 * A unified diff inserting `lines` at the top of `file` (a zero-context hunk: the report does not
 * read the repository, so it cannot quote surrounding lines). `patch -p1` applies it as is;
 * `git apply` needs `--unidiff-zero`.
 */
export function insertionPatch(file: string, lines: readonly string[]): string {
  return [
    `--- a/${file}`,
    `+++ b/${file}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((line) => `+${line}`),
    '',
  ].join('\n');
}

function targetOf(finding: FrictionFinding, change: FrictionChange): FrictionProposal['target'] {
  if (change.kind === 'memory') return 'memory';
  if (finding.skill) return 'skill';
  return change.file === 'CLAUDE.md' ? 'CLAUDE.md' : 'AGENTS.md';
}

/** A unified diff creating `file` with `lines` (`patch -p1`, `git apply`). */
export function creationPatch(file: string, lines: readonly string[]): string {
  return [
    '--- /dev/null',
    `+++ b/${file}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((line) => `+${line}`),
    '',
  ].join('\n');
}

/**
 * Clusters related findings: those with the same subject (a failing command seen as a recurring
 * failure and as a retry loop) become one, led by the costliest. Their events overlap, so the
 * cost and sessions are the leader's, not a sum; lines and evidence are merged.
 */
export function clusterFindings(
  findings: readonly FrictionFinding[],
  maxEvidence: number,
): FrictionFinding[] {
  const groups = new Map<string, FrictionFinding[]>();
  const clustered: FrictionFinding[] = [];
  for (const finding of findings) {
    if (finding.subject === null) {
      clustered.push(finding);
      continue;
    }
    const group = groups.get(finding.subject);
    if (group) group.push(finding);
    else groups.set(finding.subject, [finding]);
  }
  for (const group of groups.values()) {
    const [leader, ...others] = [...group].sort(
      (a, b) =>
        b.cost.estimatedMinutes - a.cost.estimatedMinutes ||
        a.kind.localeCompare(b.kind) ||
        a.key.localeCompare(b.key),
    );
    if (others.length === 0) {
      clustered.push(leader);
      continue;
    }
    const merge = (of: (f: FrictionFinding) => readonly string[], max: number) =>
      [...new Set(group.flatMap(of))].sort().slice(0, max);
    clustered.push({
      ...leader,
      projectIds: merge((f) => f.projectIds, Infinity),
      summary: [leader.summary, ...others.map((f) => f.summary)].join(' '),
      sessions: Math.max(...group.map((f) => f.sessions)),
      firstAt: Math.min(...group.map((f) => f.firstAt)),
      lastAt: Math.max(...group.map((f) => f.lastAt)),
      evidence: {
        sessionIds: merge((f) => f.evidence.sessionIds, maxEvidence),
        eventIds: merge((f) => f.evidence.eventIds, maxEvidence),
        memoryIds: merge((f) => f.evidence.memoryIds, maxEvidence),
      },
      agentIds: merge((f) => f.agentIds, Infinity),
      proposedLines: [...new Set([leader, ...others].flatMap((f) => f.proposedLines))],
      alsoSeenAs: [...new Set(others.map((f) => f.kind))].filter((kind) => kind !== leader.kind),
      confidence: round2(Math.min(0.95, Math.max(...group.map((f) => f.confidence)) + 0.05)),
    });
  }
  return clustered;
}

export interface FrictionReportInput {
  window: FrictionWindow;
  scope: FrictionScope;
  totals: FrictionTotals;
  findings: readonly FrictionFinding[];
  timeline: readonly FrictionDayCount[];
  /** Evidence ids kept per merged cluster. */
  maxEvidence: number;
}

/**
 * The report: related findings clustered, proposals ranked and numbered, the timeline sorted,
 * cost summed per project.
 */
export function buildFrictionReport(input: FrictionReportInput): FrictionReport {
  const proposals = frictionProposals(
    clusterFindings(input.findings, input.maxEvidence),
    input.window,
  );
  const byProject = new Map<string, { estimatedMinutes: number; proposals: number }>();
  for (const proposal of proposals) {
    // A cross-project finding's cost is shared evenly between its projects.
    const share = proposal.cost.estimatedMinutes / proposal.projectIds.length;
    for (const projectId of proposal.projectIds) {
      const entry = byProject.get(projectId) ?? { estimatedMinutes: 0, proposals: 0 };
      entry.estimatedMinutes += share;
      entry.proposals += 1;
      byProject.set(projectId, entry);
    }
  }
  const costByProject = [...byProject]
    .map(([projectId, entry]) => ({
      projectId,
      estimatedMinutes: round2(entry.estimatedMinutes),
      proposals: entry.proposals,
    }))
    .sort(
      (a, b) => b.estimatedMinutes - a.estimatedMinutes || a.projectId.localeCompare(b.projectId),
    );
  const timeline = [...input.timeline].sort(
    (a, b) => a.day.localeCompare(b.day) || a.kind.localeCompare(b.kind),
  );
  return {
    window: input.window,
    scope: input.scope,
    totals: input.totals,
    proposals,
    timeline,
    costByProject,
  };
}
