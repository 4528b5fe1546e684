import type {
  ConfigRepairRow,
  FrictionScope,
  FrictionSettings,
  FrictionWindow,
  RecipeRow,
} from '@engram/core';
import type { Database } from 'better-sqlite3';
import { WINDOW_AND_SCOPE, windowAndScope } from './sqlite-friction-sql';

/** The part of an error message that is kept and normalised (as for the failure patterns). */
const MAX_ERROR_CHARS = 2_000;
/** The longest recipe the query looks for (the LAG columns it writes). */
const MAX_RECIPE_STEPS = 8;

/**
 * The reads of the configuration-drift and missing-skill detectors, as SQL over events.db: one
 * pass over the tool-call topic puts the window's calls into a temporary table in turn order,
 * each classified where it is read (the core's configRepairOf and recipeStepOf as SQL
 * functions, the failures' normalised error); drift pairs each repair with the failure before it
 * in the same turn, recipes are consecutive runs of a turn (window functions). Both end in a
 * GROUP BY with a HAVING on the sessions threshold, so only qualifying groups reach the process.
 * The temporary tables live on disk (temp_store = FILE), so memory stays bounded.
 */
export class SqliteFrictionHabits {
  /** The window and scope `temp.friction_calls` holds (null: not collected yet). */
  private collected: string | null = null;

  constructor(
    private readonly db: Database,
    private readonly toolCallsTopic: number | null,
  ) {}

  private collect(window: FrictionWindow, scope: FrictionScope): void {
    const key = JSON.stringify([window, scope]);
    if (this.collected === key) return;
    this.collected = key;
    this.db.exec('DROP TABLE IF EXISTS temp.friction_calls');
    this.db.exec(`CREATE TEMP TABLE friction_calls (
      tenant TEXT, project TEXT, session TEXT, prompt INTEGER, at INTEGER, event TEXT,
      agent TEXT, tool TEXT, failed INTEGER, pattern TEXT, err TEXT, command TEXT,
      recipe_step TEXT, is_command INTEGER, repair TEXT, duration INTEGER, tokens INTEGER)`);
    if (this.toolCallsTopic === null) return;
    // Inserted in turn order: within a (session, prompt) turn, rowid order is call order.
    this.db
      .prepare(
        `INSERT INTO temp.friction_calls
         SELECT tenant, project, session, prompt, at, event, agent, tool, failed,
                CASE WHEN failed THEN engram_normalise_error(err) END,
                CASE WHEN failed THEN err END, command,
                engram_recipe_step(tool, command, paths, failed),
                coalesce(trim(command) <> '', 0),
                CASE WHEN NOT failed THEN engram_config_repair(tool, command, paths) END,
                duration, tokens
         FROM (
           SELECT value ->> '$.tenantId' AS tenant, value ->> '$.projectId' AS project,
                  value ->> '$.sessionId' AS session, value ->> '$.promptId' AS prompt,
                  value ->> '$.stepIndex' AS step_index, value ->> '$.timestamp' AS at,
                  value ->> '$.eventId' AS event, value ->> '$.agentId' AS agent,
                  value ->> '$.toolName' AS tool, value ->> '$.outcome' = 'error' AS failed,
                  substr(coalesce(value ->> '$.errorMessage', ''), 1, ${MAX_ERROR_CHARS}) AS err,
                  value ->> '$.command' AS command, value -> '$.filePaths' AS paths,
                  coalesce(value ->> '$.durationMs', 0) AS duration,
                  coalesce(value ->> '$.tokensUsed', 0) AS tokens
           FROM records WHERE topic_id = :toolCalls AND typeof(value) = 'text')
         WHERE ${WINDOW_AND_SCOPE}
         ORDER BY session, prompt, at, step_index, event`,
      )
      .run({ toolCalls: this.toolCallsTopic, ...windowAndScope(window, scope) });
  }

  /**
   * Repairs (a config file edited, a setup command run) paired with the failed call just before
   * them in the same turn, grouped by repair and the failure's tool and error pattern, when in
   * at least `minDriftSessions` sessions. Evidence: repair and failure events, half each.
   */
  configRepairs(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): ConfigRepairRow[] {
    this.collect(window, scope);
    const rows = this.db
      .prepare(
        `WITH marked AS (
           SELECT rowid AS id, repair,
                  MAX(CASE WHEN failed AND pattern <> '' THEN rowid END) OVER (
                    PARTITION BY session, prompt ORDER BY rowid
                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS failure_id
           FROM temp.friction_calls WHERE (failed AND pattern <> '') OR repair IS NOT NULL),
         paired AS (
           SELECT r.tenant, r.project, r.session, r.agent, r.at, r.event AS repair_event,
                  f.event AS failure_event, r.repair ->> '$.kind' AS repair_kind,
                  r.repair ->> '$.target' AS repair, f.tool AS failure_tool, f.pattern, f.err,
                  f.command AS failure_command, r.duration + f.duration AS duration,
                  r.tokens + f.tokens AS tokens
           FROM marked m JOIN temp.friction_calls r ON r.rowid = m.id
             JOIN temp.friction_calls f ON f.rowid = m.failure_id
           WHERE m.repair IS NOT NULL)
         SELECT tenant AS tenantId, project AS projectId, repair_kind AS repairKind, repair,
                failure_tool AS failureTool, pattern AS normalisedError,
                MIN(err) AS sampleMessage, MIN(failure_command) AS sampleCommand,
                COUNT(DISTINCT session) AS sessions, COUNT(*) AS occurrences,
                SUM(duration) AS durationMs, SUM(tokens) AS tokens, MIN(at) AS firstAt,
                MAX(at) AS lastAt, engram_sample(session, :max) AS sessionIds,
                engram_sample(repair_event, :half) AS repairEvents,
                engram_sample(failure_event, :half) AS failureEvents,
                engram_sample(agent, 100) AS agentIds, engram_day_counts(at) AS days
         FROM paired GROUP BY tenant, project, repair_kind, repair, failure_tool, pattern
         HAVING COUNT(DISTINCT session) >= :minSessions
         ORDER BY tenantId, projectId, failureTool, normalisedError, repairKind, repair`,
      )
      .all({
        max: settings.maxEvidence,
        half: Math.ceil(settings.maxEvidence / 2),
        minSessions: settings.minDriftSessions,
      }) as (Omit<ConfigRepairRow, 'sessionIds' | 'eventIds' | 'agentIds' | 'days'> & {
      sessionIds: string;
      repairEvents: string;
      failureEvents: string;
      agentIds: string;
      days: string;
    })[];
    return rows.map(({ repairEvents, failureEvents, ...row }) => ({
      ...row,
      sessionIds: parse<string[]>(row.sessionIds),
      eventIds: [...parse<string[]>(repairEvents), ...parse<string[]>(failureEvents)]
        .sort()
        .slice(0, settings.maxEvidence),
      agentIds: parse<string[]>(row.agentIds),
      days: parse<Record<string, number>>(row.days),
    }));
  }

  /**
   * Runs of `minRecipeSteps`..`maxRecipeSteps` consecutive calls of one turn, with at least
   * `minRecipeCommands` commands, grouped per project, when in at least `minRecipeSessions`
   * sessions. Steps seen in fewer sessions than that cannot be part of a recipe: they break
   * runs before any grouping (and keep the groups few). Evidence: each run's last call.
   */
  recipes(window: FrictionWindow, scope: FrictionScope, settings: FrictionSettings): RecipeRow[] {
    const { minRecipeSteps: min, maxRecipeSteps: max } = settings;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 2 || max < min) {
      throw new RangeError(`recipe steps must be 2 <= min <= max, got ${min}..${max}`);
    }
    if (max > MAX_RECIPE_STEPS) {
      throw new RangeError(`recipes longer than ${MAX_RECIPE_STEPS} steps are not looked for`);
    }
    this.collect(window, scope);
    this.db.exec('DROP TABLE IF EXISTS temp.friction_steps');
    this.db.exec(
      'CREATE TEMP TABLE friction_steps (id INTEGER PRIMARY KEY, step TEXT UNIQUE, command INTEGER)',
    );
    this.db
      .prepare(
        `INSERT INTO temp.friction_steps (step, command)
         SELECT recipe_step, MAX(is_command) FROM temp.friction_calls
         WHERE recipe_step IS NOT NULL
         GROUP BY recipe_step HAVING COUNT(DISTINCT session) >= :minSessions`,
      )
      .run({ minSessions: settings.minRecipeSessions });
    const lags = Array.from({ length: max - 1 }, (_, i) => i + 1);
    const shortest = Array.from({ length: min }, (_, i) => i);
    const longest = Array.from({ length: max }, (_, i) => i);
    const lengths = Array.from({ length: max - min + 1 }, (_, i) => min + i);
    // Every run of every length as a row (its last call's session, time, event), …
    const runs = lengths.map((n) => {
      const back = Array.from({ length: n }, (_, i) => n - 1 - i);
      return `SELECT tenant, project, ${back.map((i) => `s${i}`).join(` || ',' || `)} AS run,
          session, agent, at, event, ${back.map((i) => `u${i}`).join(' + ')} AS duration,
          ${back.map((i) => `k${i}`).join(' + ')} AS tokens
        FROM steps
        WHERE ${back.map((i) => `s${i} IS NOT NULL`).join(' AND ')}
          AND ${back.map((i) => `c${i}`).join(' + ')} >= :minCommands`;
    });
    const rows = this.db
      .prepare(
        `WITH steps AS MATERIALIZED (SELECT * FROM (
           SELECT c.tenant, c.project, c.session, c.agent, c.at, c.event,
                  n.id AS s0, coalesce(n.command, 0) AS c0,
                  ${lags.map((i) => `LAG(n.id, ${i}) OVER w AS s${i}, LAG(coalesce(n.command, 0), ${i}) OVER w AS c${i}`).join(',\n')},
                  c.duration AS u0, c.tokens AS k0,
                  ${lags.map((i) => `LAG(c.duration, ${i}) OVER w AS u${i}, LAG(c.tokens, ${i}) OVER w AS k${i}`).join(',\n')}
           FROM temp.friction_calls c LEFT JOIN temp.friction_steps n ON n.step = c.recipe_step
           WINDOW w AS (PARTITION BY c.session, c.prompt ORDER BY c.rowid))
           -- Only the ends of runs that may qualify are kept: a shortest run's steps, and
           -- enough commands within the longest.
           WHERE ${shortest.map((i) => `s${i} IS NOT NULL`).join(' AND ')}
             AND ${longest.map((i) => `coalesce(c${i}, 0)`).join(' + ')} >= :minCommands)
         ,
         runs AS MATERIALIZED (${runs.join('\nUNION ALL\n')}),
         -- … then the runs in enough sessions, and only their rows measured (the samples and
         -- day counts are functions called per row: not for the many runs that do not qualify).
         qualifying AS (
           SELECT tenant, project, run FROM runs GROUP BY tenant, project, run
           HAVING COUNT(DISTINCT session) >= :minSessions)
         SELECT tenant, project, run, COUNT(DISTINCT session) AS sessions,
                COUNT(*) AS occurrences, SUM(duration) AS durationMs, SUM(tokens) AS tokens,
                MIN(at) AS firstAt, MAX(at) AS lastAt, engram_sample(session, :max) AS sessionIds,
                engram_sample(event, :max) AS eventIds, engram_sample(agent, 100) AS agentIds,
                engram_day_counts(at) AS days
         FROM runs JOIN qualifying USING (tenant, project, run)
         GROUP BY tenant, project, run
         ORDER BY tenant, project, run`,
      )
      .all({
        max: settings.maxEvidence,
        minSessions: settings.minRecipeSessions,
        minCommands: settings.minRecipeCommands,
      }) as {
      tenant: string;
      project: string;
      run: string;
      sessions: number;
      occurrences: number;
      durationMs: number;
      tokens: number;
      firstAt: number;
      lastAt: number;
      sessionIds: string;
      eventIds: string;
      agentIds: string;
      days: string;
    }[];
    const stepOf = this.db.prepare('SELECT step FROM temp.friction_steps WHERE id = ?').pluck();
    return rows.map(({ tenant, project, run, ...row }) => ({
      ...row,
      tenantId: tenant,
      projectId: project,
      steps: run.split(',').map((id) => stepOf.get(Number(id)) as string),
      sessionIds: parse<string[]>(row.sessionIds),
      eventIds: parse<string[]>(row.eventIds),
      agentIds: parse<string[]>(row.agentIds),
      days: parse<Record<string, number>>(row.days),
    }));
  }
}

function parse<T>(json: string): T {
  return JSON.parse(json) as T;
}
