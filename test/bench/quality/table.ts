import type { QualityRow, QualitySection } from './types';

/** Columns in a stable order: the metrics every area shares first, then the rest alphabetically. */
const PREFERRED = ['Pk', 'WindowDiff', 'P', 'R', 'F1', 'recall@5', 'recall@10', 'MRR'];

function metricColumns(rows: readonly QualityRow[]): string[] {
  const names = new Set(rows.flatMap((row) => Object.keys(row.metrics)));
  const first = PREFERRED.filter((name) => names.has(name));
  const rest = [...names].filter((name) => !PREFERRED.includes(name)).sort();
  return [...first, ...rest];
}

function formatValue(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  return Number.isInteger(value) && Math.abs(value) >= 10 ? String(value) : value.toFixed(3);
}

/** Plain-text table, columns padded; one header row and a rule. */
export function textTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** One table over every section: area, dataset, method, then each metric that any row has. */
export function qualityTable(sections: readonly QualitySection[]): string {
  const rows = sections.flatMap((section) => section.rows);
  if (rows.length === 0) return '(no rows)';
  const columns = metricColumns(rows);
  const body = rows.map((row) => [
    row.area,
    row.dataset,
    row.baseline ? `${row.method} (baseline)` : row.method,
    ...columns.map((name) => formatValue(row.metrics[name])),
  ]);
  return textTable([['area', 'dataset', 'method', ...columns], ...body]);
}
