import { isoDate } from './friction-findings';
import type { FrictionProposal, FrictionReport, FrictionScope } from './friction-types';

export function scopeLabel(scope: FrictionScope): string {
  switch (scope.kind) {
    case 'project':
      return scope.tenantId === null
        ? `project ${scope.projectId}`
        : `project ${scope.projectId} (tenant ${scope.tenantId})`;
    case 'tenant':
      return `tenant ${scope.tenantId}`;
    case 'all':
      return 'the whole organisation';
  }
}

/** The window as `YYYY-MM-DD – YYYY-MM-DD` (the last day is the one `to` ends in). */
export function windowLabel(report: Pick<FrictionReport, 'window'>): string {
  return `${isoDate(report.window.from)} – ${isoDate(report.window.to - 1)}`;
}

/** The report as Markdown: a summary table, then one section per proposal with its change. */
export function renderFrictionMarkdown(report: FrictionReport): string {
  const lines = [
    `# Friction report: ${scopeLabel(report.scope)}`,
    '',
    `Window ${windowLabel(report)} · ${report.totals.sessions} sessions · ` +
      `${report.totals.events} events · ${report.proposals.length} proposals`,
    '',
  ];
  if (report.proposals.length === 0) {
    lines.push('No friction found above the thresholds.', '');
    return lines.join('\n');
  }
  lines.push(
    '| id | kind | severity | sessions | est. minutes | confidence | target | title |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...report.proposals.map(
      (p) =>
        `| ${p.id} | ${p.kind} | ${p.severity.level} (${p.severity.score}) | ${p.sessions} | ` +
        `${p.cost.estimatedMinutes} | ${p.confidence} | ${p.target} | ${cell(p.title)} |`,
    ),
    '',
  );
  for (const proposal of report.proposals) lines.push(...proposalSection(proposal));
  if (report.costByProject.length > 0) {
    lines.push(
      '## Cost by project',
      '',
      '| project | est. minutes | proposals |',
      '| --- | --- | --- |',
      ...report.costByProject.map(
        (row) => `| ${cell(row.projectId)} | ${row.estimatedMinutes} | ${row.proposals} |`,
      ),
      '',
    );
  }
  return lines.join('\n');
}

function proposalSection(p: FrictionProposal): string[] {
  const lines = [
    `## ${p.id}: ${p.title}`,
    '',
    p.summary,
    '',
    `- kind: ${p.kind}${p.alsoSeenAs.length > 0 ? ` (also ${p.alsoSeenAs.join(', ')})` : ''}; projects: ${p.projectIds.join(', ')}; tenant: ${p.tenantId}`,
    `- severity: ${p.severity.level} — ${p.sessions} sessions × ${p.cost.estimatedMinutes} min ` +
      `= ${p.severity.score} (${p.cost.occurrences} occurrences, ${p.cost.measuredMinutes} min ` +
      `measured, ${p.cost.tokens} tokens)`,
    `- confidence: ${p.confidence}`,
    `- evidence: sessions ${list(p.evidence.sessionIds)}; events ${list(p.evidence.eventIds)}; ` +
      `memories ${list(p.evidence.memoryIds)}`,
    '',
  ];
  if (p.change.kind === 'file') {
    lines.push(
      `Proposed change to ${p.change.file}:`,
      '',
      '```diff',
      p.change.patch.trimEnd(),
      '```',
      '',
    );
  } else {
    lines.push(
      `Proposed change: retire memory ${p.change.memoryId} (or rewrite it in review).`,
      '',
    );
  }
  return lines;
}

function list(ids: readonly string[]): string {
  return ids.length === 0 ? '—' : ids.map((id) => `\`${id}\``).join(', ');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
