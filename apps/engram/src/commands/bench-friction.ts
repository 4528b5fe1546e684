import { DEFAULT_FRICTION_SETTINGS, type FrictionReport } from '@engram/core';
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DAY,
  generateOrganisation,
  START,
  type OrganisationShape,
} from './bench-friction-generate';
import { DECOYS, plantedFound } from './bench-friction-plants';
import { frictionTopics, runFrictionReport, type FrictionRun } from './friction-report.command';

export { generateOrganisation } from './bench-friction-generate';
export { plantedFound } from './bench-friction-plants';

/**
 * `engram bench friction`: a generated organisation (developers × weeks × sessions of their
 * agents) written straight into an embedded events.db, with frictions planted in it; then
 * `friction-report` over the whole organisation, run in a child process so its wall time and
 * peak RSS are the report's alone. Reports the figures and the recall of the planted frictions.
 */
export interface FrictionBenchOptions extends OrganisationShape {
  /** Keep the generated data here (default: a temporary directory, removed after). */
  dataDir?: string;
  log: (line: string) => void;
}

export interface FrictionBenchResult {
  developers: number;
  weeks: number;
  sessions: number;
  events: number;
  dbMb: number;
  generateSeconds: number;
  reportSeconds: number;
  peakRssMb: number;
  eventsPerSecond: number;
  proposals: number;
  planted: number;
  plantedFound: number;
  plantedRecall: number;
  /** The planted frictions not found (kind, project, marker). */
  missed: string[];
  decoys: number;
  /** Decoys the report proposed (should be none). */
  decoysReported: string[];
  /** Proposals without an event id in their evidence (should be none). */
  withoutEvidence: number;
  cores: number;
}

/** The child's side: one report over the organisation, measured. */
export async function measureFrictionReport(
  dataDir: string,
  weeks: number,
): Promise<{
  reportSeconds: number;
  peakRssMb: number;
  report: FrictionReport;
}> {
  const started = process.hrtime.bigint();
  const run: FrictionRun = {
    dataDir,
    topics: frictionTopics(''),
    window: { from: START - DAY, to: START + weeks * 7 * DAY },
    scope: { kind: 'all' },
    settings: { ...DEFAULT_FRICTION_SETTINGS, minSessionsPerFinding: 5 },
  };
  const outcome = await runFrictionReport(run);
  const reportSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (outcome.kind === 'refused') throw new Error(outcome.shortfall.message);
  return {
    reportSeconds,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    report: outcome.report,
  };
}

export async function benchFriction(options: FrictionBenchOptions): Promise<FrictionBenchResult> {
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'engram-bench-friction-'));
  const keep = options.dataDir !== undefined;
  try {
    const started = Date.now();
    if (existsSync(join(dir, 'events.db'))) {
      throw new Error(`${dir} already has an events.db: give bench friction an empty --data-dir`);
    }
    options.log(
      `generating ${options.developers} developers × ${options.weeks} weeks × ` +
        `${options.sessionsPerDay} sessions a day × ~${options.eventsPerSession} events in ${dir}`,
    );
    const counts = generateOrganisation(dir, options);
    const generateSeconds = (Date.now() - started) / 1000;
    options.log(`generated ${counts.events} events in ${generateSeconds.toFixed(1)} s; reporting`);
    const measured = await measureInChild(dir, options.weeks);
    const { planted, found, missed, decoysReported } = plantedFound(measured.report);
    return {
      developers: options.developers,
      weeks: options.weeks,
      sessions: counts.sessions,
      events: counts.events,
      dbMb: Math.round(statSync(join(dir, 'events.db')).size / 1024 / 1024),
      generateSeconds: round1(generateSeconds),
      reportSeconds: round1(measured.reportSeconds),
      peakRssMb: measured.peakRssMb,
      eventsPerSecond: Math.round(counts.events / measured.reportSeconds),
      proposals: measured.report.proposals.length,
      planted,
      plantedFound: found,
      plantedRecall: Math.round((found / planted) * 100) / 100,
      missed,
      decoys: DECOYS.length,
      decoysReported,
      withoutEvidence: measured.report.proposals.filter((p) => p.evidence.eventIds.length === 0)
        .length,
      cores: cpus().length,
    };
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `engram bench friction --measure DIR` in a child: its peak RSS is the report's. */
function measureInChild(
  dir: string,
  weeks: number,
): Promise<{ reportSeconds: number; peakRssMb: number; report: FrictionReport }> {
  return new Promise((resolve, reject) => {
    const child = fork(
      process.argv[1],
      ['bench', 'friction', '--measure', dir, '--weeks', String(weeks)],
      {
        execArgv: process.execArgv,
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      },
    );
    let answer: { reportSeconds: number; peakRssMb: number; report: FrictionReport } | null = null;
    child.on('message', (message) => {
      answer = message as typeof answer;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (answer !== null) resolve(answer);
      else reject(new Error(`the measuring child exited with ${code} and no figures`));
    });
  });
}

/** The child's entry: measure, send the figures to the parent. */
export async function runFrictionMeasureChild(dir: string, weeks: number): Promise<void> {
  const measured = await measureFrictionReport(dir, weeks);
  if (process.send) process.send(measured);
  else console.log(JSON.stringify({ ...measured, report: undefined }));
}

export function formatFrictionBench(result: FrictionBenchResult): string {
  return [
    `friction-report over ${result.events} events (${result.sessions} sessions, ` +
      `${result.developers} developers × ${result.weeks} weeks, events.db ${result.dbMb} MB)`,
    `  report: ${result.reportSeconds} s (${result.eventsPerSecond} events/s), peak RSS ${result.peakRssMb} MB`,
    `  planted frictions found: ${result.plantedFound}/${result.planted} (recall ${result.plantedRecall}); ` +
      `${result.proposals} proposals, ${result.withoutEvidence} without evidence ids`,
    ...result.missed.map((what) => `  missed: ${what}`),
    `  decoys proposed: ${result.decoysReported.length}/${result.decoys}`,
    ...result.decoysReported.map((what) => `  decoy proposed: ${what}`),
    `  generation: ${result.generateSeconds} s; ${result.cores} cores`,
  ].join('\n');
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

/** What `engram bench friction` takes (the options of `engram bench`). */
export interface FrictionBenchCommandOptions {
  developers?: number;
  weeks?: number;
  eventsPerSession?: number;
  /** Internal: the measuring child's run over this data dir. */
  measure?: string;
  json?: boolean;
}

/** `engram bench friction`: the figures on stdout (one JSON line with --json), progress on stderr. */
export async function runFrictionBenchCommand(options: FrictionBenchCommandOptions): Promise<void> {
  const weeks = options.weeks ?? 4;
  if (options.measure !== undefined) {
    await runFrictionMeasureChild(options.measure, weeks);
    return;
  }
  const result = await benchFriction({
    developers: options.developers ?? 50,
    weeks,
    sessionsPerDay: 2,
    eventsPerSession: options.eventsPerSession ?? 500,
    log: (line) => console.error(line),
  });
  console.log(options.json ? JSON.stringify(result) : formatFrictionBench(result));
}
