// A generated organisation for the distributed friction report (test support and measurement,
// not part of the CLI): what the retrieval indexer would have written for developers × working
// days × 2 sessions a day, with frictions planted — user turns, tool calls and memories, through
// the indexer itself.
import type { ToolCallIndex } from '@engram/app-retrieval';
import type { Typed } from '@engram/contracts';
import {
  DEFAULT_FRICTION_SETTINGS,
  frictionReportFrom,
  normaliseErrorMessage,
  type FrictionReportWithGaps,
  type FrictionSource,
  type RecallStoreWriter,
  type AccessUpdate,
} from '@engram/core';
import { indexFrictionData } from './friction-distributed-replay';

const DAY = 86_400_000;
const MINUTE = 60_000;
export const BENCH_START = Date.UTC(2026, 9, 5, 8);

export interface DistributedOrganisationSize {
  developers: number;
  weeks: number;
  /** User turns per session (the only events Elasticsearch keeps of a session). */
  turnsPerSession: number;
  /** Tool calls per session (indexed; the observer's counter on each session). */
  callsPerSession: number;
}

/** Said in every 7th session (one each), across the projects: repeated corrections. */
export const PLANTED_CORRECTIONS = [
  "No, don't use npm here, we use pnpm for every package.",
  'Never commit directly to main, open a pull request first.',
  'Actually, the staging database is read-only, use the replica instead.',
] as const;

/** Hit in a third of the sessions (one each): recurring failures. */
export const PLANTED_ERRORS = [
  'ECONNREFUSED 127.0.0.1:5432 while running migrations',
  'Cannot find module @acme/config from src/index.ts',
  'Expected 200 received 503 in health check',
  'EACCES permission denied opening /var/run/docker.sock',
] as const;

const STALE_MEMORIES = 20;

/** Rerun unchanged three times in one turn of every 4th session: a retry loop (tool misuse). */
export const PLANTED_RETRY_COMMAND = 'make e2e';

export interface GeneratedOrganisation {
  sessions: number;
  turns: number;
  /** User turns + tool calls (what the report's totals count in distributed mode). */
  events: number;
  staleServed: number;
}

/** A word of letters only (digits would be normalised away): one per number. */
function word(n: number): string {
  let text = '';
  for (let i = n + 26 * 26; i > 0; i = Math.floor(i / 26)) {
    text += String.fromCharCode(97 + (i % 26));
  }
  return text;
}

/** Noise: a one-off correction and failure of session `s`, each about its own things. */
function noise(s: number): { correction: string; error: string } {
  return {
    correction: `Actually, the ${word(3 * s)} ${word(3 * s + 1)} belongs to ${word(3 * s + 2)}.`,
    error: `${word(2 * s)} ${word(2 * s + 1)} crashed`,
  };
}

/**
 * Writes the organisation of `tenantId`: turns and tool calls in
 * batches of 5,000, then the memories (20 of them stale and served since) and their accesses.
 */
export async function generateDistributedOrganisation(
  tenantId: string,
  size: DistributedOrganisationSize,
  stores: {
    writer: RecallStoreWriter;
    writeAccess: (updates: AccessUpdate[]) => Promise<{ failed: AccessUpdate[] }>;
    toolCalls: ToolCallIndex;
  },
): Promise<GeneratedOrganisation> {
  let turns: Typed<'PromptSubmitted'>[] = [];
  let calls: Typed<'ToolCallObserved'>[] = [];
  let sessions = 0;
  let turnCount = 0;
  const flushTurns = async () => {
    await indexFrictionData(
      { prompts: turns, toolCalls: calls, sessionEnds: [], memories: [], accesses: [] },
      stores.writer,
      stores.writeAccess,
      stores.toolCalls,
    );
    turns = [];
    calls = [];
  };
  // Five developers a project, at most ten projects.
  const projects = Math.min(10, Math.ceil(size.developers / 5));
  for (let dev = 0; dev < size.developers; dev += 1) {
    const projectId = `${tenantId}/repo-${dev % projects}`;
    const agentId = dev % 3 === 0 ? 'claude-code' : 'codex';
    for (let day = 0; day < size.weeks * 7; day += 1) {
      if (day % 7 >= 5) continue;
      for (let k = 0; k < 2; k += 1) {
        const s = sessions++;
        const sessionId = `${tenantId}-s${s}`;
        const at = BENCH_START + day * DAY + k * 4 * 3_600_000;
        for (let t = 0; t < size.turnsPerSession; t += 1) {
          const planted = t === 3 && s % 7 < PLANTED_CORRECTIONS.length;
          const text = planted
            ? PLANTED_CORRECTIONS[s % 7]
            : t === 5 && s % 11 === 0
              ? noise(s).correction
              : `fix the bug in module ${(s * 31 + t) % 997} and add tests`;
          turns.push({
            type: 'PromptSubmitted',
            eventId: `${tenantId}-p${turnCount++}`,
            tenantId,
            projectId,
            sessionId,
            agentId,
            userId: `dev-${dev}`,
            timestamp: at + t * MINUTE,
            schemaVersion: 1,
            promptId: t + 1,
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
        }
        calls.push(...sessionToolCalls({ tenantId, projectId, sessionId, agentId, at }, s, size));
        if (turns.length + calls.length >= 5_000) await flushTurns();
      }
    }
  }
  await flushTurns();
  const memories = Array.from({ length: 10 * STALE_MEMORIES }, (_, i) => ({
    memoryId: `${tenantId}-m${i}`,
    tenantId,
    projectId: `${tenantId}/repo-${i % projects}`,
    content: `memory ${i} about module ${i}`,
    staleAt: i < STALE_MEMORIES ? BENCH_START + DAY : null,
    lastAccessedAt: BENCH_START,
    accessCount: 0,
    provenanceSessionIds: [`${tenantId}-s${i}`],
  }));
  await indexFrictionData(
    {
      prompts: [],
      toolCalls: [],
      sessionEnds: [],
      memories,
      accesses: memories.map((m) => ({
        tenantId,
        projectId: m.projectId,
        memoryId: m.memoryId,
        increment: 2,
        lastAccessedAt: BENCH_START + 10 * DAY,
      })),
    },
    stores.writer,
    stores.writeAccess,
  );
  return {
    sessions,
    turns: turnCount,
    events: turnCount + sessions * size.callsPerSession,
    staleServed: STALE_MEMORIES,
  };
}

/**
 * The tool calls of session `s`, spread over its turns: mostly successes; each of its error
 * messages failing three times in three turns (one command each: no loop); in every 4th session
 * the planted retry loop, three failures in one turn (no message: no error pattern, so not a
 * recurring failure as well).
 */
function sessionToolCalls(
  envelope: { tenantId: string; projectId: string; sessionId: string; agentId: string; at: number },
  s: number,
  size: DistributedOrganisationSize,
): Typed<'ToolCallObserved'>[] {
  const calls = size.callsPerSession;
  const failures = new Map<number, { command: string; error: string | null }>();
  const messages = [
    ...(s % 3 === 0 && s % 5 < PLANTED_ERRORS.length ? [PLANTED_ERRORS[s % 5]] : []),
    noise(s).error,
  ];
  messages.forEach((error: string, m) => {
    for (let j = 0; j < 3; j += 1) {
      // One command per message: a planted failure is its own finding, not merged with another.
      const planted = (PLANTED_ERRORS as readonly string[]).indexOf(error);
      const command = planted >= 0 ? `check ${planted}` : `check ${word(2 * s)}`;
      failures.set((10 + 40 * j + m) % calls, { command, error });
    }
  });
  if (s % 4 === 1) {
    for (let j = 0; j < 3; j += 1) {
      failures.set((140 + j) % calls, { command: PLANTED_RETRY_COMMAND, error: null });
    }
  }
  const spacing = (size.turnsPerSession * MINUTE) / calls;
  return Array.from({ length: calls }, (_, i) => {
    const failure = failures.get(i);
    return {
      type: 'ToolCallObserved',
      eventId: `${envelope.sessionId}-c${i}`,
      tenantId: envelope.tenantId,
      projectId: envelope.projectId,
      sessionId: envelope.sessionId,
      agentId: envelope.agentId,
      userId: null,
      timestamp: Math.floor(envelope.at + i * spacing),
      schemaVersion: 1,
      promptId: Math.floor((i * size.turnsPerSession) / calls) + 1,
      stepIndex: i,
      toolName: 'Bash',
      filePaths: [],
      command: failure?.command ?? `step ${i % 7}`,
      argsJson: '{}',
      outcome: failure === undefined ? 'ok' : 'error',
      errorMessage: failure?.error ?? null,
      durationMs: 2_000,
      tokensUsed: null,
      mcp: false,
    };
  });
}

export interface DistributedFrictionMeasure {
  seconds: number;
  /** The process's resident set: before the report, and its peak while the report ran. */
  rssMb: { before: number; peak: number };
  report: FrictionReportWithGaps;
}

/** One report over the tenant's whole generated period, timed, its RSS sampled every 20 ms. */
export async function measureDistributedReport(
  source: FrictionSource,
  tenantId: string,
  weeks: number,
): Promise<DistributedFrictionMeasure> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = process.hrtime.bigint();
  try {
    const outcome = await frictionReportFrom(source, {
      window: { from: BENCH_START - DAY, to: BENCH_START + weeks * 7 * DAY },
      scope: { kind: 'tenant', tenantId },
      settings: { ...DEFAULT_FRICTION_SETTINGS, minSessionsPerFinding: 5 },
    });
    if (outcome.kind === 'refused') throw new Error(outcome.shortfall.message);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    peak = Math.max(peak, process.memoryUsage().rss);
    return {
      seconds,
      rssMb: { before: Math.round(before / 1e6), peak: Math.round(peak / 1e6) },
      report: outcome.report,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** Planted frictions with a proposal of their kind whose title names them. */
export function distributedPlantedFound(report: FrictionReportWithGaps): {
  planted: number;
  found: number;
} {
  const titled = (kind: string, text: string) =>
    report.proposals.some((p) => p.kind === kind && p.title.includes(text));
  const errors = PLANTED_ERRORS.filter((e) =>
    titled('recurring-failure', normaliseErrorMessage(e).slice(0, 30)),
  );
  const corrections = PLANTED_CORRECTIONS.filter((c) =>
    titled('repeated-correction', c.split(' ').slice(-3).join(' ')),
  );
  const stale = report.proposals.filter((p) => p.kind === 'stale-memory').length;
  const loop = titled('tool-misuse', PLANTED_RETRY_COMMAND) ? 1 : 0;
  return {
    planted: PLANTED_ERRORS.length + PLANTED_CORRECTIONS.length + STALE_MEMORIES + 1,
    found: errors.length + corrections.length + Math.min(stale, STALE_MEMORIES) + loop,
  };
}
