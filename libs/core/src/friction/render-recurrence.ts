import type { FrictionRecurrence } from './friction-recurrence';

/**
 * The "since approval" section of a report (issue #21): every approved friction proposal in the
 * scope, and whether its friction came back after the approval. Markdown and an HTML fragment
 * (no script, no URL in the source, like the rest of the page).
 */

const HEADING = 'Approved proposals: did the friction recur?';

export function recurrenceMarkdown(recurrences: readonly FrictionRecurrence[]): string {
  const lines = [`## ${HEADING}`, ''];
  if (recurrences.length === 0) {
    lines.push('No approved friction proposal in this scope yet.', '');
    return lines.join('\n');
  }
  lines.push(
    '| proposal | kind | approved | recurred | sessions since | occurrences since | last seen | title |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const r of recurrences) {
    lines.push(
      `| \`${r.proposalId}\` | ${r.kind} | ${iso(r.approvedAt)} | ${r.recurred ? '**yes**' : 'no'} | ` +
        `${r.sessions} | ${r.occurrences} | ${r.lastSeenAt === null ? '—' : iso(r.lastSeenAt)} | ` +
        `${r.title.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`,
    );
  }
  const recurred = recurrences.filter((r) => r.recurred);
  for (const r of recurred) {
    const sessions = r.evidence.sessionIds.map((id) => `\`${id}\``).join(', ');
    lines.push('', `- \`${r.proposalId}\` recurred in: ${sessions || '—'}`);
  }
  lines.push(
    '',
    `${recurred.length} of ${recurrences.length} approved proposals recurred since their approval ` +
      `(checked until ${iso(recurrences[0].checkedUntil)}).`,
    '',
  );
  return lines.join('\n');
}

export function recurrenceHtml(recurrences: readonly FrictionRecurrence[]): string {
  if (recurrences.length === 0) {
    return `<h2>${HEADING}</h2>\n<p>No approved friction proposal in this scope yet.</p>\n`;
  }
  const rows = recurrences
    .map(
      (r) =>
        `<tr class="${r.recurred ? 'recurred' : 'held'}"><td><code>${text(r.proposalId)}</code></td>` +
        `<td>${text(r.kind)}</td><td>${iso(r.approvedAt)}</td>` +
        `<td>${r.recurred ? '<strong>yes</strong>' : 'no'}</td><td>${r.sessions}</td>` +
        `<td>${r.occurrences}</td><td>${r.lastSeenAt === null ? '—' : iso(r.lastSeenAt)}</td>` +
        `<td>${text(r.title)}</td></tr>`,
    )
    .join('\n');
  return (
    `<h2 id="recurrence">${HEADING}</h2>\n<table><thead><tr><th>proposal</th><th>kind</th>` +
    '<th>approved</th><th>recurred</th><th>sessions since</th><th>occurrences since</th>' +
    `<th>last seen</th><th>title</th></tr></thead><tbody>\n${rows}\n</tbody></table>\n`
  );
}

/** The report page with the section added before the end of its body. */
export function withRecurrenceHtml(
  page: string,
  recurrences: readonly FrictionRecurrence[],
): string {
  const end = page.lastIndexOf('</body>');
  const section = recurrenceHtml(recurrences);
  return end < 0 ? page + section : page.slice(0, end) + section + page.slice(end);
}

function iso(at: number): string {
  return new Date(at).toISOString().slice(0, 16).replace('T', ' ');
}

/** Text for HTML: escaped, and `://` as entities (the page's source holds no URL). */
function text(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/:\/\//g, '&#58;&#47;&#47;');
}
