import { describe, expect, it } from 'vitest';
import { renderFrictionHtml } from '../friction/render-html';
import { renderFrictionMarkdown } from '../friction/render-markdown';
import type { FrictionReport } from '../friction/friction-types';
import type { FrictionSignalGap } from './friction-source';
import { htmlWithGaps, markdownWithGaps, unavailableLines } from './friction-source-gaps';

const REPORT: FrictionReport = {
  window: { from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 10, 8) },
  scope: { kind: 'all' },
  totals: { sessions: 12, events: 340 },
  proposals: [],
  timeline: [],
  costByProject: [],
};
const GAPS: FrictionSignalGap[] = [
  { signal: 'retry-loops', partial: false, reason: 'the graph keeps no command <per> call' },
  { signal: 'totals', partial: true, reason: 'tool calls and user prompts only' },
];

describe('the gaps of a distributed report in every format', () => {
  it('should name each missing or narrower signal', () => {
    expect(unavailableLines(GAPS)).toEqual([
      'Not available in distributed mode (or narrower than in embedded mode):',
      'retry-loops: not available in distributed mode — the graph keeps no command <per> call',
      'totals: narrower in distributed mode — tool calls and user prompts only',
    ]);
    expect(unavailableLines([])).toEqual([]);
  });

  it('should list them under the Markdown opening paragraph', () => {
    const markdown = markdownWithGaps(renderFrictionMarkdown(REPORT), GAPS);
    const lines = markdown.split('\n');
    const window = lines.findIndex((line) => line.startsWith('Window '));
    expect(lines.slice(window + 1, window + 6)).toEqual([
      '',
      'Not available in distributed mode (or narrower than in embedded mode):',
      '',
      '- retry-loops: not available in distributed mode — the graph keeps no command <per> call',
      '- totals: narrower in distributed mode — tool calls and user prompts only',
    ]);
    expect(markdown).toContain('No friction found above the thresholds.');
    expect(markdownWithGaps(renderFrictionMarkdown(REPORT), [])).toBe(
      renderFrictionMarkdown(REPORT),
    );
  });

  it('should list them, escaped, after the HTML opening paragraph', () => {
    const html = htmlWithGaps(renderFrictionHtml(REPORT), GAPS);
    const list = html.indexOf('<div class="unavailable">');
    expect(list).toBeGreaterThan(html.indexOf('<p>Window '));
    expect(list).toBeLessThan(html.indexOf('<div class="charts">'));
    expect(html).toContain(
      '<li>retry-loops: not available in distributed mode — the graph keeps no command &lt;per&gt; call</li>',
    );
    expect(htmlWithGaps(renderFrictionHtml(REPORT), undefined)).toBe(renderFrictionHtml(REPORT));
  });
});
