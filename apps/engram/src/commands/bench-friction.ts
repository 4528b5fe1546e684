import { DEFAULT_FRICTION_SETTINGS, type FrictionReport } from '@engram/core';
import { SqliteEventLog, type AppendRecord } from '@engram/embedded';
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { random } from './bench-observe';
import { frictionTopics, runFrictionReport, type FrictionRun } from './friction-report.command';

/**
 * `engram bench friction`: a generated organisation (developers × weeks × sessions of their
 * agents) written straight into an embedded events.db, with frictions planted in it; then
 * `friction-report` over the whole organisation, run in a child process so its wall time and
 * peak RSS are the report's alone. Reports the figures and the recall of the planted frictions.
 */
export interface FrictionBenchOptions {
  developers: number;
  weeks: number;
  /** Sessions per developer per working day. */
  sessionsPerDay: number;
  /** Events per session (about). */
  eventsPerSession: number;
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
  cores: number;
}

const TENANT = 'org';
const PROJECTS = 10;
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 5, 8); // a Monday

/** A planted friction: what the generator writes, and how a proposal is recognised as it. */
interface Planted {
  kind: 'recurring-failure' | 'repeated-correction' | 'tool-misuse';
  project: string;
  /** Share of the project's sessions it happens in. */
  share: number;
  command?: string;
  error?: (rng: Rng) => string;
  phrasings?: string[];
  /** A word the proposal's title must contain. */
  marker: string;
}

const PLANTED: Planted[] = [
  {
    kind: 'recurring-failure',
    project: 'org/project-0',
    share: 0.1,
    command: 'npm run migrate',
    error: (rng) =>
      `Error: connect ECONNREFUSED 127.0.0.1:${5400 + rng.int(99)} at /tmp/run-${rng.int(1e6)}/db.ts:${rng.int(300)}`,
    marker: 'ECONNREFUSED',
  },
  {
    kind: 'recurring-failure',
    project: 'org/project-3',
    share: 0.08,
    command: 'npx tsc --noEmit',
    error: (rng) =>
      `src/module-${rng.int(40)}/index.ts(${rng.int(500)},${rng.int(80)}): error TS2307: Cannot find module '@org/shared-config'`,
    marker: 'TS2307',
  },
  {
    kind: 'recurring-failure',
    project: 'org/project-5',
    share: 0.12,
    command: 'docker compose up -d',
    error: (rng) =>
      `Error response from daemon: Ports are not available: listen tcp 0.0.0.0:${8000 + rng.int(10)}: bind: address already in use`,
    marker: 'Ports are not available',
  },
  {
    kind: 'recurring-failure',
    project: 'org/project-7',
    share: 0.06,
    command: 'pytest tests/integration',
    error: (rng) =>
      `E   sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) FATAL: role "ci" does not exist (pid ${rng.int(99_999)})`,
    marker: 'OperationalError',
  },
  {
    kind: 'repeated-correction',
    project: 'org/project-1',
    share: 0.06,
    phrasings: [
      "No, don't use npm in this repository. We use pnpm for everything.",
      'No, stop running npm here: use pnpm for installs and scripts.',
      "Actually, this repository uses pnpm, don't use npm.",
    ],
    marker: 'pnpm',
  },
  {
    kind: 'repeated-correction',
    project: 'org/project-4',
    share: 0.05,
    phrasings: [
      "No, don't mock the database in the repository tests. Use the testcontainers postgres.",
      'Never mock the database in repository tests, use the testcontainers postgres instead.',
    ],
    marker: 'mock',
  },
  {
    kind: 'repeated-correction',
    project: 'org/project-8',
    share: 0.05,
    phrasings: [
      "No, that's wrong: feature flags live in config/flags.yaml, not in the environment.",
      'Actually, feature flags live in config/flags.yaml, never in environment variables.',
    ],
    marker: 'flags',
  },
  {
    kind: 'tool-misuse',
    project: 'org/project-2',
    share: 0.08,
    command: 'make e2e',
    error: (rng) => `e2e: ${rng.int(20)} of 140 specs failed (timeout waiting for selector)`,
    marker: 'make e2e',
  },
  {
    kind: 'tool-misuse',
    project: 'org/project-6',
    share: 0.07,
    command: 'cargo build --release',
    error: (rng) => `error: linking with \`cc\` failed: exit status: ${rng.int(3) + 1}`,
    marker: 'cargo build',
  },
  {
    kind: 'tool-misuse',
    project: 'org/project-9',
    share: 0.06,
    command: 'git push origin HEAD',
    error: () => '! [rejected] HEAD -> feature (non-fast-forward)',
    marker: 'git push',
  },
];

const WORDS = (
  'refresh token cache queue worker retry schema index query parser router handler session ' +
  'config logger metrics billing invoice account profile upload export report search filter ' +
  'payment webhook scheduler migration fixture layout button modal sidebar theme locale'
).split(' ');

class Rng {
  private readonly random: () => number;
  constructor(seed: number) {
    this.random = random(seed);
  }
  next(): number {
    return this.random();
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  words(n: number): string {
    return Array.from({ length: n }, () => this.pick(WORDS)).join(' ');
  }
  /** Made-up words (noise that nothing else shares). */
  gibberish(n: number): string {
    const syllables = [
      'ka',
      'lo',
      'mi',
      'ter',
      'son',
      'vu',
      'dra',
      'pel',
      'qui',
      'zor',
      'ben',
      'fa',
    ];
    return Array.from({ length: n }, () =>
      Array.from({ length: 3 }, () => this.pick(syllables)).join(''),
    ).join(' ');
  }
}

interface Batch {
  prompts: AppendRecord[];
  toolCalls: AppendRecord[];
  lifecycle: AppendRecord[];
}

/** Writes the organisation into `dataDir`; returns the number of sessions and events. */
export function generateOrganisation(
  dataDir: string,
  options: Pick<
    FrictionBenchOptions,
    'developers' | 'weeks' | 'sessionsPerDay' | 'eventsPerSession'
  >,
): { sessions: number; events: number } {
  const topics = frictionTopics('');
  const log = SqliteEventLog.open({ dataDir });
  for (const topic of [topics.prompts, topics.toolCalls, topics.lifecycle]) {
    log.ensureTopic(topic, 4);
  }
  const rng = new Rng(42);
  let sessions = 0;
  let events = 0;
  let eventSeq = 0;
  let batch: Batch = { prompts: [], toolCalls: [], lifecycle: [] };
  const flush = () => {
    log.transaction(() => {
      log.append(topics.prompts, batch.prompts);
      log.append(topics.toolCalls, batch.toolCalls);
      log.append(topics.lifecycle, batch.lifecycle);
    });
    batch = { prompts: [], toolCalls: [], lifecycle: [] };
  };
  try {
    for (let week = 0; week < options.weeks; week += 1) {
      for (let weekday = 0; weekday < 5; weekday += 1) {
        for (let dev = 0; dev < options.developers; dev += 1) {
          for (let s = 0; s < options.sessionsPerDay; s += 1) {
            const project = `org/project-${(dev + (s % 2) * 3) % PROJECTS}`;
            const sessionId = `w${week}-d${weekday}-dev${dev}-s${s}`;
            const agentId = dev % 3 === 0 ? 'codex' : 'claude-code';
            let at = START + (week * 7 + weekday) * DAY + dev * 60_000 + s * 4 * 3_600_000;
            let promptId = 0;
            const envelope = () => {
              eventSeq += 1;
              at += 7_000;
              return {
                eventId: `ev-${eventSeq.toString(36).padStart(8, '0')}`,
                tenantId: TENANT,
                projectId: project,
                sessionId,
                agentId,
                userId: `dev-${dev}`,
                timestamp: at,
                schemaVersion: 1,
              };
            };
            const push = (list: AppendRecord[], event: Record<string, unknown>) => {
              list.push({ key: sessionId, value: JSON.stringify(event), timestamp: at });
              events += 1;
            };
            const userPrompt = (text: string) => {
              promptId += 1;
              push(batch.prompts, {
                type: 'PromptSubmitted',
                ...envelope(),
                promptId,
                source: 'user',
                channel: 'cli',
                channelKind: 'explicit',
                explicitThreadId: null,
                text,
                methodology: null,
                methodologyPhase: null,
                workUnitRef: null,
                parentEpisodeId: null,
              });
            };
            const toolCall = (step: number, fields: Record<string, unknown>) =>
              push(batch.toolCalls, {
                type: 'ToolCallObserved',
                ...envelope(),
                promptId,
                stepIndex: step,
                toolName: 'Bash',
                filePaths: [],
                command: null,
                argsJson: '{}',
                outcome: 'ok',
                errorMessage: null,
                durationMs: 200 + rng.int(5_000),
                tokensUsed: rng.int(4) === 0 ? null : 100 + rng.int(2_000),
                mcp: false,
                ...fields,
              });
            push(batch.lifecycle, {
              type: 'SessionStarted',
              ...envelope(),
              source: 'startup',
              model: null,
              cwd: `/home/dev-${dev}/${project}`,
              gitBranch: null,
              gitSha: null,
            });
            const planted = PLANTED.filter((p) => p.project === project && rng.next() < p.share);
            const budget = options.eventsPerSession - 2;
            let written = 0;
            while (written < budget) {
              userPrompt(`${rng.pick(['fix', 'add', 'refactor', 'test'])} the ${rng.words(6)}`);
              written += 1;
              const calls = Math.min(budget - written, 5 + rng.int(12));
              for (let step = 0; step < calls; step += 1) {
                const kind = rng.int(10);
                const file = `src/${rng.pick(WORDS)}/${rng.pick(WORDS)}.ts`;
                if (kind < 5) toolCall(step, { toolName: 'Read', filePaths: [file] });
                else if (kind < 8) toolCall(step, { toolName: 'Edit', filePaths: [file] });
                else if (rng.int(12) === 0) {
                  // Noise: a one-off failure with an error of its own.
                  toolCall(step, {
                    command: `./scripts/${rng.words(1)}.sh`,
                    outcome: 'error',
                    errorMessage: `${rng.gibberish(2)} failed: ${rng.gibberish(3)}`,
                  });
                } else toolCall(step, { command: `npm run ${rng.pick(WORDS)}` });
              }
              written += calls;
              // Noise: a one-off correction about something else.
              if (rng.int(40) === 0) {
                userPrompt(`Actually, the ${rng.gibberish(2)} is not what I meant.`);
              }
            }
            for (const p of planted) {
              if (p.kind === 'repeated-correction') {
                userPrompt(rng.pick(p.phrasings ?? []));
              } else {
                userPrompt(`run ${p.command ?? ''} again`);
                const attempts = p.kind === 'tool-misuse' ? 3 + rng.int(3) : 1;
                for (let step = 0; step < attempts; step += 1) {
                  toolCall(step, {
                    command: p.command ?? null,
                    outcome: 'error',
                    errorMessage: p.error?.(rng) ?? 'failed',
                    durationMs: 20_000 + rng.int(60_000),
                  });
                }
              }
            }
            push(batch.lifecycle, {
              type: 'SessionEnded',
              ...envelope(),
              userMessageCount: promptId,
              durationS: 3_600,
              reason: 'exit',
            });
            sessions += 1;
            if (batch.toolCalls.length >= 20_000) flush();
          }
        }
      }
    }
    flush();
  } finally {
    log.close();
  }
  return { sessions, events };
}

/** Whether a planted friction is among the proposals (its kind, project and marker). */
export function plantedFound(report: FrictionReport): { planted: number; found: number } {
  const found = PLANTED.filter((p) =>
    report.proposals.some(
      (proposal) =>
        (proposal.kind === p.kind || proposal.alsoSeenAs.includes(p.kind)) &&
        proposal.projectIds.includes(p.project) &&
        `${proposal.title} ${proposal.summary}`.includes(p.marker),
    ),
  );
  return { planted: PLANTED.length, found: found.length };
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
    const { planted, found } = plantedFound(measured.report);
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
      `${result.proposals} proposals`,
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
