import type { FrictionReport } from '../friction/friction-types';
import type { FrictionSignalGap } from './friction-source';

/** A report with the signals its source could not read (absent or empty: none missing). */
export type FrictionReportWithGaps = FrictionReport & { unavailable?: FrictionSignalGap[] };

export const UNAVAILABLE_HEADING =
  'Not available in distributed mode (or narrower than in embedded mode):';

/**
 * What the report could not read, one line per signal after a heading; empty when nothing is
 * missing. Every format prints these, so a reader never takes a missing signal for an absence of
 * friction.
 */
export function unavailableLines(gaps: readonly FrictionSignalGap[] | undefined): string[] {
  if (gaps === undefined || gaps.length === 0) return [];
  return [
    UNAVAILABLE_HEADING,
    ...gaps.map(
      (gap) =>
        `${gap.signal}: ${gap.partial ? 'narrower in distributed mode' : 'not available in distributed mode'} — ${gap.reason}`,
    ),
  ];
}

/**
 * The Markdown report with the gaps listed under its opening paragraph (the window and totals
 * line): inserted after the first blank line that follows the `Window` line.
 */
export function markdownWithGaps(
  markdown: string,
  gaps: readonly FrictionSignalGap[] | undefined,
): string {
  const [heading, ...lines] = unavailableLines(gaps);
  if (heading === undefined) return markdown;
  const section = [heading, '', ...lines.map((line) => `- ${line}`), '', ''].join('\n');
  const at = afterParagraph(markdown, '\nWindow ', '\n\n');
  return markdown.slice(0, at) + section + markdown.slice(at);
}

/** The HTML page with the gaps as a list after its opening paragraph (the window and totals). */
export function htmlWithGaps(html: string, gaps: readonly FrictionSignalGap[] | undefined): string {
  const [heading, ...lines] = unavailableLines(gaps);
  if (heading === undefined) return html;
  const section =
    `<div class="unavailable"><p>${escapeHtml(heading)}</p><ul>` +
    lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('') +
    '</ul></div>\n';
  const at = afterParagraph(html, '<p>Window ', '</p>\n');
  return html.slice(0, at) + section + html.slice(at);
}

/** Where the paragraph opening with `start` ends (after `end`); the text's end if absent. */
function afterParagraph(text: string, start: string, end: string): number {
  const opens = text.indexOf(start);
  if (opens < 0) return text.length;
  const closes = text.indexOf(end, opens);
  return closes < 0 ? text.length : closes + end.length;
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}
