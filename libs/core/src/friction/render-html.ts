import { MS_PER_DAY } from '../distillation/time';
import { isoDate } from './friction-findings';
import { scopeLabel, windowLabel } from './render-markdown';
import { FRICTION_KINDS, type FrictionKind, type FrictionReport } from './friction-types';

/**
 * The report as one self-contained HTML page that opens offline: inline CSS, inline SVG charts
 * (friction over time, top clusters, cost by project), no script, no external URL. Text from the
 * events is escaped, and `://` in it is written as entities, so the page source holds no URL.
 */
export function renderFrictionHtml(report: FrictionReport): string {
  const title = `Friction report: ${scopeLabel(report.scope)}`;
  const rows = report.proposals
    .map(
      (p) =>
        `<tr><td><a href="#${esc(p.id)}">${esc(p.id)}</a></td><td>${esc(p.kind)}</td>` +
        `<td class="${p.severity.level}">${p.severity.level} (${p.severity.score})</td>` +
        `<td>${p.sessions}</td><td>${p.cost.estimatedMinutes}</td><td>${p.confidence}</td>` +
        `<td>${esc(p.target)}</td><td>${esc(p.title)}</td></tr>`,
    )
    .join('\n');
  const sections = report.proposals
    .map((p) => {
      const change =
        p.change.kind === 'file'
          ? `<p>Proposed change to <code>${esc(p.change.file)}</code>:</p><pre>${esc(p.change.patch)}</pre>`
          : `<p>Proposed change: retire memory <code>${esc(p.change.memoryId)}</code>.</p>`;
      return (
        `<section id="${esc(p.id)}"><h3>${esc(p.id)}: ${esc(p.title)}</h3><p>${esc(p.summary)}</p>` +
        `<p>Severity ${p.severity.level}: ${p.sessions} sessions × ${p.cost.estimatedMinutes} min = ` +
        `${p.severity.score} · confidence ${p.confidence}</p>` +
        `<p class="evidence">Sessions: ${codes(p.evidence.sessionIds)}<br>Events: ` +
        `${codes(p.evidence.eventIds)}<br>Memories: ${codes(p.evidence.memoryIds)}</p>${change}</section>`
      );
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(title)}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: left; vertical-align: top; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; }
.high { color: #b00020; font-weight: 600; } .medium { color: #a15c00; } .low { color: #555; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: 4px; }
.evidence code { font-size: 12px; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
</style>
</head>
<body>
<h1>${esc(title)}</h1>
<p>Window ${esc(windowLabel(report))} · ${report.totals.sessions} sessions · ${report.totals.events} events · ${report.proposals.length} proposals</p>
<div class="charts">
<figure><figcaption>Friction over time</figcaption>${timelineChart(report)}</figure>
<figure><figcaption>Top clusters (severity)</figcaption>${barChart(
    report.proposals
      .slice(0, 10)
      .map((p) => ({ label: `${p.id} ${p.kind}`, value: p.severity.score })),
  )}</figure>
<figure><figcaption>Estimated minutes lost by project</figcaption>${barChart(
    report.costByProject
      .slice(0, 10)
      .map((row) => ({ label: row.projectId, value: row.estimatedMinutes })),
  )}</figure>
</div>
<h2>Proposals</h2>
${report.proposals.length === 0 ? '<p>No friction found above the thresholds.</p>' : `<table><thead><tr><th>id</th><th>kind</th><th>severity</th><th>sessions</th><th>est. minutes</th><th>confidence</th><th>target</th><th>title</th></tr></thead><tbody>\n${rows}\n</tbody></table>`}
${sections}
</body>
</html>
`;
}

const COLOURS: Readonly<Record<FrictionKind, string>> = {
  'recurring-failure': '#d1495b',
  'repeated-correction': '#edae49',
  'tool-misuse': '#00798c',
  'stale-memory': '#6c5b7b',
  'configuration-drift': '#8b4513',
  'missing-skill': '#7a9e3f',
};

const MAX_DAYS = 366;
const LEGEND_COLUMNS = 3;
const LEGEND_COLUMN_WIDTH = 145;

/** Stacked bars per UTC day of the window, one colour per kind, with a legend. */
function timelineChart(report: FrictionReport): string {
  const days: string[] = [];
  for (
    let at = report.window.from;
    at < report.window.to && days.length < MAX_DAYS;
    at += MS_PER_DAY
  ) {
    days.push(isoDate(at));
  }
  if (days.length === 0 || isoDate(report.window.to - 1) !== days[days.length - 1]) {
    if (days.length < MAX_DAYS) days.push(isoDate(report.window.to - 1));
  }
  const counts = new Map<string, Map<FrictionKind, number>>();
  for (const entry of report.timeline) {
    const day = counts.get(entry.day) ?? new Map<FrictionKind, number>();
    day.set(entry.kind, (day.get(entry.kind) ?? 0) + entry.count);
    counts.set(entry.day, day);
  }
  const totals = days.map((day) =>
    [...(counts.get(day)?.values() ?? [])].reduce((a, b) => a + b, 0),
  );
  const max = Math.max(1, ...totals);
  const width = 480;
  // The legend wraps, LEGEND_COLUMNS kinds a row, below the day labels.
  const legendRows = Math.ceil(FRICTION_KINDS.length / LEGEND_COLUMNS);
  const height = 186 + 14 * legendRows;
  const plot = { left: 36, top: 10, bottom: 26 + 14 * legendRows, right: 10 };
  const innerH = height - plot.top - plot.bottom;
  const slot = (width - plot.left - plot.right) / days.length;
  const bars: string[] = [];
  days.forEach((day, i) => {
    let y = plot.top + innerH;
    for (const kind of FRICTION_KINDS) {
      const count = counts.get(day)?.get(kind) ?? 0;
      if (count === 0) continue;
      const h = (count / max) * innerH;
      y -= h;
      bars.push(
        `<rect x="${fmt(plot.left + i * slot + slot * 0.1)}" y="${fmt(y)}" width="${fmt(slot * 0.8)}" ` +
          `height="${fmt(h)}" fill="${COLOURS[kind]}"><title>${esc(`${day} ${kind}: ${count}`)}</title></rect>`,
      );
    }
  });
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  const labels = days
    .map((day, i) =>
      i % labelEvery === 0
        ? `<text x="${fmt(plot.left + i * slot)}" y="${height - plot.bottom + 14}">${day.slice(5)}</text>`
        : '',
    )
    .join('');
  const legend = FRICTION_KINDS.map((kind, i) => {
    const x = plot.left + (i % LEGEND_COLUMNS) * LEGEND_COLUMN_WIDTH;
    const y = height - 14 * (legendRows - Math.floor(i / LEGEND_COLUMNS));
    return (
      `<rect x="${x}" y="${y}" width="10" height="10" fill="${COLOURS[kind]}"/>` +
      `<text x="${x + 14}" y="${y + 9}">${kind}</text>`
    );
  }).join('');
  return (
    `<svg role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<line x1="${plot.left}" y1="${plot.top + innerH}" x2="${width - plot.right}" y2="${plot.top + innerH}" stroke="#999"/>` +
    `<text x="0" y="${plot.top + 10}">${max}</text>${bars.join('')}${labels}${legend}</svg>`
  );
}

/** Horizontal bars with their labels and values. */
function barChart(items: readonly { label: string; value: number }[]): string {
  const width = 480;
  const rowH = 22;
  const height = Math.max(1, items.length) * rowH + 10;
  const labelW = 190;
  const max = Math.max(1, ...items.map((item) => item.value));
  const bars = items
    .map((item, i) => {
      const w = (item.value / max) * (width - labelW - 60);
      const y = 5 + i * rowH;
      return (
        `<text x="0" y="${y + 14}">${esc(cut(item.label, 30))}</text>` +
        `<rect x="${labelW}" y="${y + 3}" width="${fmt(Math.max(1, w))}" height="${rowH - 8}" fill="#00798c"/>` +
        `<text x="${fmt(labelW + Math.max(1, w) + 4)}" y="${y + 14}">${item.value}</text>`
      );
    })
    .join('');
  const empty = items.length === 0 ? '<text x="0" y="20">nothing to show</text>' : '';
  return `<svg role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${bars}${empty}</svg>`;
}

function codes(ids: readonly string[]): string {
  return ids.length === 0 ? '—' : ids.map((id) => `<code>${esc(id)}</code>`).join(' ');
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function fmt(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/** HTML-escaped, with `://` as entities so no URL appears in the page's source. */
function esc(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/:\/\//g, '&#58;&#47;&#47;');
}
