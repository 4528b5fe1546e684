import {
  CorrectionClusters,
  MisconfigurationError,
  type ConfigRepairRow,
  type FailurePatternRow,
  type FrictionDayCount,
  type FrictionScope,
  type FrictionSettings,
  type FrictionSignalGap,
  type FrictionSource,
  type FrictionTotals,
  type FrictionWindow,
  type RecipeRow,
  type RetryLoopRow,
  type StaleMemoryRow,
} from '@engram/core';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteFrictionHabits } from './sqlite-friction-habits';
import {
  GROUP_MEASURES,
  registerFunctions,
  WINDOW_AND_SCOPE,
  windowAndScope,
  withSamples,
  type SampleColumns,
  type SampleField,
} from './sqlite-friction-sql';

/** The (prefixed) agent topics the report reads. */
export interface FrictionTopics {
  prompts: string;
  toolCalls: string;
  lifecycle: string;
}

export interface SqliteFrictionSourceOptions {
  dataDir: string;
  topics: FrictionTopics;
}

/** A user prompt's text is classified from its head: corrections are said up front. */
const MAX_PROMPT_CHARS = 4_000;
/** The part of an error message that is normalised (normaliseErrorMessage keeps 300 chars). */
const MAX_ERROR_CHARS = 2_000;

/**
 * The friction report's reads in embedded mode, as SQL over the data directory (SPEC §9: the
 * heavy lifting is pushed to the store). events.db holds every event as JSON in `records`; the
 * queries aggregate with json_extract (`->>`) and GROUP BY, so only aggregated rows — error
 * patterns, retry habits, per-day counts — and the user corrections reach the process, never
 * every event. Two steps run a core function inside SQLite (registered as SQL functions): the
 * observer's `normaliseErrorMessage` for GROUP BY, and the distiller's correction classification
 * over the user prompts, which are streamed. retrieval.db, when present, gives the stale
 * memories that were still served. Both databases are opened read-only.
 */
export class SqliteFrictionSource implements FrictionSource {
  readonly mode = 'embedded';
  private readonly events: Database;
  private readonly retrieval: Database | null;
  private readonly topicIds: { prompts: number; toolCalls: number; lifecycle: number } | null;
  /** The window and scope `temp.friction_errors` holds (null: not collected yet). */
  private errorsCollected: string | null = null;
  /** Configuration drift and missing skills (their SQL lives in sqlite-friction-habits.ts). */
  private readonly habits: SqliteFrictionHabits;

  private constructor(options: SqliteFrictionSourceOptions) {
    const eventsPath = join(options.dataDir, 'events.db');
    if (!existsSync(eventsPath)) {
      throw new MisconfigurationError(
        `no event log in ${options.dataDir} (--data-dir): run \`engram start\` and replay events first`,
      );
    }
    this.events = new BetterSqlite3(eventsPath, { readonly: true, fileMustExist: true });
    this.events.pragma('temp_store = FILE');
    registerFunctions(this.events);
    const retrievalPath = join(options.dataDir, 'retrieval.db');
    this.retrieval = existsSync(retrievalPath)
      ? new BetterSqlite3(retrievalPath, { readonly: true, fileMustExist: true })
      : null;
    const id = (name: string): number | undefined =>
      (
        this.events.prepare('SELECT id FROM topics WHERE name = ?').get(name) as
          { id: number } | undefined
      )?.id;
    const ids = {
      prompts: id(options.topics.prompts),
      toolCalls: id(options.topics.toolCalls),
      lifecycle: id(options.topics.lifecycle),
    };
    this.topicIds =
      ids.prompts === undefined || ids.toolCalls === undefined || ids.lifecycle === undefined
        ? null
        : { prompts: ids.prompts, toolCalls: ids.toolCalls, lifecycle: ids.lifecycle };
    this.habits = new SqliteFrictionHabits(this.events, this.topicIds?.toolCalls ?? null);
  }

  static open(options: SqliteFrictionSourceOptions): SqliteFrictionSource {
    return new SqliteFrictionSource(options);
  }

  close(): void {
    this.events.close();
    this.retrieval?.close();
  }

  /** The embedded report is the reference: every signal is read in full. */
  gaps(): readonly FrictionSignalGap[] {
    return [];
  }

  /** Whether retrieval.db exists (the stale-memory detector needs it). */
  get hasRetrieval(): boolean {
    return this.retrieval !== null;
  }

  /** Sessions and events of the agent topics in the window and scope. */
  totals(window: FrictionWindow, scope: FrictionScope): FrictionTotals {
    if (this.topicIds === null) return { sessions: 0, events: 0 };
    const row = this.events
      .prepare(
        `SELECT COUNT(*) AS events, COUNT(DISTINCT session) AS sessions FROM (
           SELECT value ->> '$.sessionId' AS session, value ->> '$.timestamp' AS at,
                  value ->> '$.tenantId' AS tenant, value ->> '$.projectId' AS project
           FROM records
           WHERE topic_id IN (:prompts, :toolCalls, :lifecycle) AND typeof(value) = 'text')
         WHERE ${WINDOW_AND_SCOPE}`,
      )
      .get({ ...this.topicIds, ...windowAndScope(window, scope) }) as FrictionTotals;
    return { sessions: row.sessions, events: row.events };
  }

  /**
   * Collects the failed tool calls of the window and scope into a temporary table (one pass over
   * the tool-call topic), each with its normalised error: the failure and retry queries read it.
   */
  private collectErrors(window: FrictionWindow, scope: FrictionScope): void {
    const key = JSON.stringify([window, scope]);
    if (this.errorsCollected === key) return;
    this.errorsCollected = key;
    this.events.exec('DROP TABLE IF EXISTS temp.friction_errors');
    this.events.exec(`CREATE TEMP TABLE friction_errors (
      tenant TEXT, project TEXT, session TEXT, event TEXT, agent TEXT, at INTEGER, tool TEXT,
      command TEXT, err TEXT, pattern TEXT, duration INTEGER, tokens INTEGER, prompt INTEGER,
      first_at INTEGER GENERATED ALWAYS AS (at) VIRTUAL,
      last_at INTEGER GENERATED ALWAYS AS (at) VIRTUAL,
      first_event TEXT GENERATED ALWAYS AS (event) VIRTUAL)`);
    if (this.topicIds === null) return;
    this.events
      .prepare(
        `INSERT INTO temp.friction_errors (tenant, project, session, event, agent, at, tool,
           command, err, pattern, duration, tokens, prompt)
         SELECT tenant, project, session, event, agent, at, tool, command, err,
                engram_normalise_error(err), duration, tokens, prompt
         FROM (
           SELECT value ->> '$.tenantId' AS tenant, value ->> '$.projectId' AS project,
                  value ->> '$.sessionId' AS session, value ->> '$.eventId' AS event,
                  value ->> '$.agentId' AS agent, value ->> '$.timestamp' AS at,
                  value ->> '$.toolName' AS tool, value ->> '$.command' AS command,
                  substr(coalesce(value ->> '$.errorMessage', ''), 1, ${MAX_ERROR_CHARS}) AS err,
                  coalesce(value ->> '$.durationMs', 0) AS duration,
                  coalesce(value ->> '$.tokensUsed', 0) AS tokens,
                  value ->> '$.promptId' AS prompt, value ->> '$.outcome' AS outcome
           FROM records WHERE topic_id = :toolCalls AND typeof(value) = 'text')
         WHERE outcome = 'error' AND ${WINDOW_AND_SCOPE}`,
      )
      .run({ toolCalls: this.topicIds.toolCalls, ...windowAndScope(window, scope) });
  }

  /**
   * Error patterns (tool + normalised message) per project, only those whose tenant-wide
   * cluster reaches `minSessionsPerFinding` sessions.
   */
  failurePatterns(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): FailurePatternRow[] {
    this.collectErrors(window, scope);
    const rows = this.events
      .prepare(
        `SELECT * FROM (
           SELECT *, SUM(sessions) OVER (PARTITION BY tenantId, toolName, normalisedError)
                  AS cluster_sessions
           FROM (
             SELECT tenant AS tenantId, project AS projectId, tool AS toolName,
                    pattern AS normalisedError, MIN(err) AS sampleMessage,
                    MIN(command) AS sampleCommand, COUNT(DISTINCT session) AS sessions,
                    COUNT(*) AS occurrences, ${GROUP_MEASURES}
             FROM temp.friction_errors WHERE pattern <> ''
             GROUP BY tenant, project, tool, pattern))
         WHERE cluster_sessions >= :minSessions
         ORDER BY tenantId, toolName, normalisedError, projectId`,
      )
      .all({ max: settings.maxEvidence, minSessions: settings.minSessionsPerFinding }) as (Omit<
      FailurePatternRow,
      SampleField
    > &
      SampleColumns)[];
    return rows.map(withSamples);
  }

  /**
   * Retry habits: per project, tool and command, the sessions where that command failed at
   * least `minRetries` times, when there are at least `minSessionsPerFinding` of them.
   */
  retryLoops(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): RetryLoopRow[] {
    this.collectErrors(window, scope);
    const rows = this.events
      .prepare(
        `SELECT tenant AS tenantId, project AS projectId, tool AS toolName, command,
                COUNT(*) AS sessions, SUM(n) AS occurrences, ${GROUP_MEASURES}
         FROM (${RETRY_LOOPS})
         GROUP BY tenant, project, tool, command HAVING COUNT(*) >= :minSessions
         ORDER BY tenantId, projectId, toolName, command`,
      )
      .all({
        max: settings.maxEvidence,
        minRetries: settings.minRetries,
        minSessions: settings.minSessionsPerFinding,
      }) as (Omit<RetryLoopRow, SampleField> & SampleColumns)[];
    return rows.map(withSamples);
  }

  /** Failed calls per day that belong to a recurring pattern or a retry habit. */
  failureTimeline(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): FrictionDayCount[] {
    this.collectErrors(window, scope);
    const recurring = this.events
      .prepare(
        `WITH patterns AS (
           SELECT tenant, tool, pattern FROM temp.friction_errors WHERE pattern <> ''
           GROUP BY tenant, tool, pattern HAVING COUNT(DISTINCT session) >= :minSessions)
         SELECT date(e.at / 1000, 'unixepoch') AS day, COUNT(*) AS count
         FROM temp.friction_errors e JOIN patterns p
           ON p.tenant = e.tenant AND p.tool = e.tool AND p.pattern = e.pattern
         GROUP BY day ORDER BY day`,
      )
      .all({ minSessions: settings.minSessionsPerFinding }) as { day: string; count: number }[];
    const loops = this.events
      .prepare(
        `WITH turns AS (${RETRY_TURNS}),
         habits AS (SELECT tenant, project, tool, command FROM (${RETRY_LOOPS})
                    GROUP BY tenant, project, tool, command HAVING COUNT(*) >= :minSessions)
         SELECT date(e.at / 1000, 'unixepoch') AS day, COUNT(*) AS count
         FROM temp.friction_errors e
         JOIN turns l ON l.tenant = e.tenant AND l.project = e.project AND l.tool = e.tool
           AND l.command = e.command AND l.session = e.session AND l.prompt = e.prompt
         JOIN habits h ON h.tenant = e.tenant AND h.project = e.project AND h.tool = e.tool
           AND h.command = e.command
         GROUP BY day ORDER BY day`,
      )
      .all({ minSessions: settings.minSessionsPerFinding, minRetries: settings.minRetries }) as {
      day: string;
      count: number;
    }[];
    return [
      ...recurring.map((row) => ({ ...row, kind: 'recurring-failure' as const })),
      ...loops.map((row) => ({ ...row, kind: 'tool-misuse' as const })),
    ];
  }

  /**
   * Streams the user prompts of the window and scope through the correction classification (in
   * SQLite); only the corrections and rules reach `clusters`, in time order.
   */
  corrections(window: FrictionWindow, scope: FrictionScope, clusters: CorrectionClusters): number {
    if (this.topicIds === null) return 0;
    const statement = this.events.prepare(
      `SELECT tenant, project, session, event, agent, at, correction FROM (
         SELECT tenant, project, session, event, agent, at,
                engram_correction(text) AS correction
         FROM (
           SELECT value ->> '$.tenantId' AS tenant, value ->> '$.projectId' AS project,
                  value ->> '$.sessionId' AS session, value ->> '$.eventId' AS event,
                  value ->> '$.agentId' AS agent, value ->> '$.timestamp' AS at,
                  value ->> '$.source' AS source,
                  substr(value ->> '$.text', 1, ${MAX_PROMPT_CHARS}) AS text
           FROM records WHERE topic_id = :prompts AND typeof(value) = 'text')
         WHERE source = 'user' AND ${WINDOW_AND_SCOPE})
       WHERE correction IS NOT NULL
       ORDER BY at, event`,
    );
    let count = 0;
    for (const row of statement.iterate({
      prompts: this.topicIds.prompts,
      ...windowAndScope(window, scope),
    }) as IterableIterator<{
      tenant: string;
      project: string;
      session: string;
      event: string;
      agent: string;
      at: number;
      correction: string;
    }>) {
      const correction = JSON.parse(row.correction) as {
        kind: 'correction' | 'rule';
        statement: string;
      };
      clusters.add({
        ...correction,
        tenantId: row.tenant,
        projectId: row.project,
        sessionId: row.session,
        eventId: row.event,
        agentId: row.agent,
        at: row.at,
      });
      count += 1;
    }
    return count;
  }

  configRepairs(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): ConfigRepairRow[] {
    return this.habits.configRepairs(window, scope, settings);
  }

  recipes(window: FrictionWindow, scope: FrictionScope, settings: FrictionSettings): RecipeRow[] {
    return this.habits.recipes(window, scope, settings);
  }

  /** Stale memories (retrieval.db) last accessed after they went stale, within the window. */
  staleMemories(window: FrictionWindow, scope: FrictionScope): StaleMemoryRow[] {
    if (this.retrieval === null) return [];
    const table = this.retrieval
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'retrieval_documents'`)
      .get();
    if (table === undefined) return [];
    const rows = this.retrieval
      .prepare(
        `SELECT * FROM (
           SELECT tenant_id AS tenant, project_id AS project, id,
                  doc ->> '$.memoryType' AS memory_type, doc ->> '$.content' AS content,
                  doc ->> '$.staleAt' AS stale_at, doc ->> '$.lastAccessedAt' AS at,
                  coalesce(doc ->> '$.accessCount', 0) AS access_count,
                  coalesce(doc -> '$.provenanceSessionIds', '[]') AS sessions
           FROM retrieval_documents WHERE tier = 'memories')
         WHERE stale_at IS NOT NULL AND at > stale_at AND ${WINDOW_AND_SCOPE}
         ORDER BY tenant, project, id`,
      )
      .all(windowAndScope(window, scope)) as {
      tenant: string;
      project: string;
      id: string;
      memory_type: string;
      content: string;
      stale_at: number;
      at: number;
      access_count: number;
      sessions: string;
    }[];
    return rows.map((row) => ({
      tenantId: row.tenant,
      projectId: row.project,
      memoryId: row.id,
      memoryType: row.memory_type,
      content: row.content,
      staleAt: row.stale_at,
      lastAccessedAt: row.at,
      accessCount: row.access_count,
      provenanceSessionIds: JSON.parse(row.sessions) as string[],
    }));
  }
}

/**
 * Retry loops: a command of a tool that failed at least `:minRetries` times within one user turn
 * (same session and prompt: the agent reran it without the user stepping in). The same command
 * failing once in each of three tasks is not one.
 */
const RETRY_TURNS = `SELECT tenant, project, tool, command, session, prompt, MIN(agent) AS agent,
    COUNT(*) AS n, SUM(duration) AS duration, SUM(tokens) AS tokens, MIN(at) AS first_at,
    MAX(at) AS last_at, MIN(event) AS first_event
  FROM temp.friction_errors WHERE command IS NOT NULL AND trim(command) <> ''
  GROUP BY tenant, project, tool, command, session, prompt HAVING COUNT(*) >= :minRetries`;

/** The retry loops of a session summed: one row per session, tool and command. */
const RETRY_LOOPS = `SELECT tenant, project, tool, command, session, MIN(agent) AS agent,
    SUM(n) AS n, SUM(duration) AS duration, SUM(tokens) AS tokens, MIN(first_at) AS first_at,
    MAX(last_at) AS last_at, MIN(first_event) AS first_event
  FROM (${RETRY_TURNS}) GROUP BY tenant, project, tool, command, session`;
