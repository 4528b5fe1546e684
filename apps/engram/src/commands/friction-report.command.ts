import { loadConfig } from '@engram/config';
import { TOPICS } from '@engram/contracts';
import {
  DEFAULT_FRICTION_SETTINGS,
  FRICTION_REPORT_STEPS,
  frictionReportFrom,
  htmlWithGaps,
  markdownWithGaps,
  renderFrictionHtml,
  renderFrictionMarkdown,
  type FrictionOutcome,
  type FrictionReportWithGaps,
  type FrictionScope,
  type FrictionSettings,
  type FrictionSource,
  type FrictionWindow,
} from '@engram/core';
import { SqliteFrictionSource, type FrictionTopics } from '@engram/embedded';
import type { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { progressBar, type Progress } from '../progress';
import { openDistributedFrictionSource } from './friction-distributed';
import { reviewFrictionReport, withRecurrence } from './friction-review-loop';
import { DEFAULT_DATA_DIR } from './replay.command';

export const FRICTION_FORMATS = ['md', 'json', 'html'] as const;
export type FrictionFormat = (typeof FRICTION_FORMATS)[number];

const WINDOW = /^(\d+)([hdw])$/;
const UNIT_MS = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

/** `7d`, `36h`, `2w` ending at `until` (epoch millis). */
export function parseFrictionWindow(text: string, until: number): FrictionWindow {
  const match = WINDOW.exec(text.trim());
  if (match === null || Number(match[1]) < 1) {
    throw new RangeError(
      `--window takes a positive number of hours, days or weeks (36h, 7d, 2w), got "${text}"`,
    );
  }
  const unit = match[2] as keyof typeof UNIT_MS;
  return { from: until - Number(match[1]) * UNIT_MS[unit], to: until };
}

/** `--project P [--tenant T]`, `--tenant T`, or `--all` (the default). */
export function frictionScopeOf(options: {
  project?: string;
  tenant?: string;
  all?: boolean;
}): FrictionScope {
  if (options.all && (options.project !== undefined || options.tenant !== undefined)) {
    throw new RangeError('--all reports on everything: drop --project and --tenant, or --all');
  }
  if (options.project !== undefined) {
    return { kind: 'project', projectId: options.project, tenantId: options.tenant ?? null };
  }
  if (options.tenant !== undefined) return { kind: 'tenant', tenantId: options.tenant };
  return { kind: 'all' };
}

/** `md`, `json,html`, … → the formats, each once, in the order given. */
export function parseFrictionFormats(text: string): FrictionFormat[] {
  const formats = text.split(',').map((f) => f.trim().toLowerCase());
  const unknown = formats.filter((f) => !(FRICTION_FORMATS as readonly string[]).includes(f));
  if (unknown.length > 0 || formats.length === 0) {
    throw new RangeError(`--format takes md, json or html (comma-separated), got "${text}"`);
  }
  return [...new Set(formats)] as FrictionFormat[];
}

export function frictionTopics(topicPrefix: string): FrictionTopics {
  return {
    prompts: topicPrefix + TOPICS.prompts.topic,
    toolCalls: topicPrefix + TOPICS.toolCalls.topic,
    lifecycle: topicPrefix + TOPICS.lifecycle.topic,
  };
}

export interface FrictionRun {
  dataDir: string;
  topics: FrictionTopics;
  window: FrictionWindow;
  scope: FrictionScope;
  settings: FrictionSettings;
  progress?: Progress;
}

export type { FrictionOutcome } from '@engram/core';

/**
 * The report in embedded mode: SQL over the data directory (SqliteFrictionSource), then the
 * core's report from its rows (frictionReportFrom). Refuses below the minimum of data.
 */
export async function runFrictionReport(run: FrictionRun): Promise<FrictionOutcome> {
  const source = SqliteFrictionSource.open({ dataDir: run.dataDir, topics: run.topics });
  return reportWithProgress(source, run);
}

/** The core's report from `source`, with a progress bar; closes the source. */
export async function reportWithProgress(
  source: FrictionSource,
  run: Pick<FrictionRun, 'window' | 'scope' | 'settings' | 'progress'>,
): Promise<FrictionOutcome> {
  const progress = run.progress;
  progress?.total(FRICTION_REPORT_STEPS);
  try {
    return await frictionReportFrom(source, {
      window: run.window,
      scope: run.scope,
      settings: run.settings,
      onStep: () => progress?.advance(),
    });
  } finally {
    await source.close();
    progress?.stop();
  }
}

export function renderFrictionReport(
  report: FrictionReportWithGaps,
  format: FrictionFormat,
): string {
  switch (format) {
    case 'md':
      return markdownWithGaps(renderFrictionMarkdown(report), report.unavailable);
    case 'html':
      return htmlWithGaps(renderFrictionHtml(report), report.unavailable);
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
  }
}

/** Where each format goes: `--out` as given for one format; its stem + `.ext` for several. */
export function frictionOutputs(
  formats: readonly FrictionFormat[],
  out: string | undefined,
): { format: FrictionFormat; file: string | null }[] {
  if (formats.length === 1) return [{ format: formats[0], file: out ?? null }];
  const stem =
    out === undefined ? 'friction-report' : out.slice(0, out.length - extname(out).length);
  return formats.map((format) => ({ format, file: `${stem}.${format}` }));
}

interface FrictionCommandOptions {
  window: string;
  until?: string;
  project?: string;
  tenant?: string;
  all?: boolean;
  format: string;
  out?: string;
  minSessions?: number;
  minEvents?: number;
  dataDir: string;
  distributed?: boolean;
  progress?: boolean;
  review: boolean;
}

function wholeNumber(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) {
      throw new RangeError(`${flag} takes a whole number, got "${value}"`);
    }
    return n;
  };
}

export function registerFrictionReportCommand(program: Command): void {
  program
    .command('friction-report')
    .description(
      'what keeps going wrong for the agents (recurring failures, repeated corrections, retry loops, ' +
        'configuration drift, missing skills, stale memories) and what to change: proposals ' +
        'f-YYYYMMDD-NNN with evidence',
    )
    .option('--window <span>', 'how far back: 36h, 7d, 2w', '7d')
    .option('--until <time>', 'end of the window (ISO 8601; default now)')
    .option('--project <id>', 'one project')
    .option('--tenant <id>', "one tenant (with --project: that tenant's project)")
    .option('--all', 'the whole organisation (the default)')
    .option('--format <list>', 'md, json or html, comma-separated for several', 'md')
    .option('--out <file>', 'write to a file (several formats: its stem + .md/.json/.html)')
    .option(
      '--min-sessions <n>',
      `refuse below n sessions (default ${DEFAULT_FRICTION_SETTINGS.minSessions})`,
      wholeNumber('--min-sessions'),
    )
    .option(
      '--min-events <n>',
      `refuse below n events (default ${DEFAULT_FRICTION_SETTINGS.minEvents})`,
      wholeNumber('--min-events'),
    )
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option(
      '--distributed',
      'on the configured Elasticsearch and Neo4j (signals they do not hold are listed as not available)',
    )
    .option('--no-progress', 'no progress bar on stderr')
    .option(
      '--no-review',
      'read-only: neither publish the proposals for `engram review` nor check approved ones for recurrence',
    )
    .action(async (options: FrictionCommandOptions) => {
      const until = options.until === undefined ? Date.now() : Date.parse(options.until);
      if (Number.isNaN(until)) {
        throw new RangeError(`--until takes an ISO 8601 time, got "${options.until}"`);
      }
      const formats = parseFrictionFormats(options.format);
      const settings: FrictionSettings = {
        ...DEFAULT_FRICTION_SETTINGS,
        ...(options.minSessions !== undefined && { minSessions: options.minSessions }),
        ...(options.minEvents !== undefined && { minEvents: options.minEvents }),
      };
      const run = {
        window: parseFrictionWindow(options.window, until),
        scope: frictionScopeOf(options),
        settings,
        progress: progressBar('friction-report', { unit: 'steps', enabled: options.progress }),
      };
      const outcome = options.distributed
        ? await reportWithProgress(openDistributedFrictionSource(), run)
        : await runFrictionReport({
            ...run,
            dataDir: options.dataDir,
            topics: frictionTopics(loadConfig().topicPrefix),
          });
      if (outcome.kind === 'refused') {
        console.error(`engram friction-report: ${outcome.shortfall.message}`);
        process.exitCode = 3;
        return;
      }
      // Closing the loop: proposals to review, approved ones checked for recurrence.
      const reviewed = await reviewFrictionReport(
        outcome.report,
        options,
        settings,
        async (window, since) => {
          // The span since an approval, on the same source as the report.
          const span = { window, scope: outcome.report.scope, settings: since };
          const again = options.distributed
            ? await reportWithProgress(openDistributedFrictionSource(), span)
            : await runFrictionReport({
                ...span,
                dataDir: options.dataDir,
                topics: frictionTopics(loadConfig().topicPrefix),
              });
          return again.kind === 'report' ? again.report : null;
        },
        loadConfig(),
      );
      if (reviewed.note !== '') console.error(reviewed.note);
      for (const { format, file } of frictionOutputs(formats, options.out)) {
        const text = withRecurrence(
          renderFrictionReport(reviewed.report, format),
          format,
          reviewed.recurrence,
        );
        if (file === null) process.stdout.write(text);
        else {
          await writeFile(file, text, 'utf8');
          console.error(`wrote ${file} (${reviewed.report.proposals.length} proposals)`);
        }
      }
    });
}
