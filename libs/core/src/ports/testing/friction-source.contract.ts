// The FrictionSource contract: one suite, run against every source on the same replayed data
// (the embedded SQLite source in the unit tier, the distributed Elasticsearch + Neo4j source in
// the integration tier). Where a source declares a gap (FrictionSignalGap), the suite asserts the
// documented difference instead of the embedded rows. Test support only (not exported).
import type { Memory, Typed } from '@engram/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FRICTION_SETTINGS, type FrictionSettings } from '../../friction/friction-settings';
import type { FrictionScope } from '../../friction/friction-types';
import { userCorrectionOf, type CorrectionRow } from '../../friction/repeated-corrections';
import type { FrictionSignal, FrictionSource } from '../friction-source';
import { frictionReportFrom } from '../friction-source-report';

/** A memory as the contract plants it: the fixture fills the other Memory fields. */
export type ContractMemory = Pick<
  Memory,
  | 'memoryId'
  | 'tenantId'
  | 'projectId'
  | 'content'
  | 'staleAt'
  | 'lastAccessedAt'
  | 'accessCount'
  | 'provenanceSessionIds'
>;

/** One recorded access of a memory (what a recall writes back). */
export interface ContractAccess {
  tenantId: string;
  projectId: string;
  memoryId: string;
  increment: number;
  lastAccessedAt: number;
}

/** The events and memories the contract replays, as the agents and the distiller wrote them. */
export interface FrictionContractData {
  prompts: Typed<'PromptSubmitted'>[];
  toolCalls: Typed<'ToolCallObserved'>[];
  /** Every session's end (after its calls): what closes a session for the observer. */
  sessionEnds: Typed<'SessionEnded'>[];
  memories: ContractMemory[];
  accesses: ContractAccess[];
}

export interface FrictionSourceFixture {
  /** A tenant id no other test (or earlier run) uses: the servers are shared. */
  tenant(prefix: string): string;
  /**
   * Replays the data into the stores the source reads, through the project's own writers (the
   * event log, the indexer, the observer), and opens the source over them.
   */
  replay(data: FrictionContractData): Promise<FrictionSource>;
  close(): Promise<void>;
}

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 20, 9);
const WINDOW = { from: T0 - DAY, to: T0 + 6 * DAY };
const SETTINGS: FrictionSettings = {
  ...DEFAULT_FRICTION_SETTINGS,
  minSessions: 3,
  minEvents: 10,
  minSessionsPerFinding: 2,
  maxEvidence: 2,
};

/** The contract's data for one tenant: two projects, five sessions (one outside the window). */
export function frictionContractData(tenantId: string): FrictionContractData {
  const api = `${tenantId}/api`;
  const web = `${tenantId}/web`;
  const session = (n: number) => `${tenantId}-s${n}`;
  let n = 0;
  const envelope = (s: number, at: number, projectId = api) => {
    n += 1;
    return {
      eventId: `${tenantId}-e${String(n).padStart(3, '0')}`,
      tenantId,
      projectId,
      sessionId: session(s),
      agentId: 'codex',
      userId: null,
      timestamp: at,
      schemaVersion: 1,
    };
  };
  const steps = new Map<number, number>();
  const call = (
    s: number,
    at: number,
    fields: { command: string; error?: string; promptId?: number; projectId?: string },
  ): Typed<'ToolCallObserved'> => {
    const step = steps.get(s) ?? 0;
    steps.set(s, step + 1);
    return {
      type: 'ToolCallObserved',
      ...envelope(s, at, fields.projectId),
      promptId: fields.promptId ?? 1,
      stepIndex: step,
      toolName: 'Bash',
      filePaths: [],
      command: fields.command,
      argsJson: JSON.stringify({ command: fields.command }),
      outcome: fields.error === undefined ? 'ok' : 'error',
      errorMessage: fields.error ?? null,
      durationMs: 6_000,
      tokensUsed: 100,
      mcp: false,
    };
  };
  const prompt = (s: number, at: number, text: string, source: 'user' | 'agent' = 'user') => ({
    type: 'PromptSubmitted' as const,
    ...envelope(s, at),
    promptId: 1,
    source,
    channel: 'cli',
    channelKind: 'explicit' as const,
    explicitThreadId: null,
    text,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
  });
  const migrate = (s: number, at: number, error: string, projectId = api) =>
    call(s, at, { command: 'npm run migrate', error, projectId });
  const toolCalls = [
    // The same migration error (another temp dir and port each time) in three sessions of api…
    migrate(1, T0, 'ECONNREFUSED 127.0.0.1:5432 in /tmp/a1/db.ts'),
    migrate(2, T0 + 1_000, 'ECONNREFUSED 127.0.0.1:5433 in /tmp/b2/db.ts'),
    migrate(3, T0 + 2_000, 'ECONNREFUSED 10.0.0.1:5432 in /tmp/c3/db.ts'),
    // …and one of web: one tenant-wide pattern, a row per project.
    migrate(4, T0 + 3_000, 'ECONNREFUSED 10.0.0.2:5432 in /tmp/d4/db.ts', web),
    // A retry loop: the same failing command three times in one turn, in two sessions…
    ...[1, 2].flatMap((s) =>
      [0, 1, 2].map((i) =>
        call(s, T0 + 10_000 + i, { command: 'make e2e', error: `flaky run ${i}` }),
      ),
    ),
    // …but three failures spread over three turns of s3 are no loop (and "other" is in 1 session).
    ...[1, 2, 3].map((p) =>
      call(3, T0 + 20_000 + p, { command: 'make e2e', error: 'other', promptId: p }),
    ),
    call(4, T0 + 30_000, { command: 'npm test', projectId: web }),
    // Outside the window.
    migrate(5, T0 + 30 * DAY, 'ECONNREFUSED 1.1.1.1:1 in /tmp/z/db.ts'),
  ];
  const prompts = [
    prompt(1, T0 + 40_000, "No, don't use npm here, we use pnpm."),
    prompt(2, T0 + 40_000, 'fix the flaky e2e test'),
    prompt(3, T0 + 40_000, 'Never use npm here: pnpm only.'),
    prompt(3, T0 + 50_000, "No, don't use npm here, we use pnpm.", 'agent'),
  ];
  const lastAt = new Map<number, number>();
  for (const event of [...toolCalls, ...prompts]) {
    const s = Number(event.sessionId.slice(event.sessionId.lastIndexOf('-s') + 2));
    lastAt.set(s, Math.max(lastAt.get(s) ?? 0, event.timestamp));
  }
  const sessionEnds = [...lastAt].map(([s, at]): Typed<'SessionEnded'> => ({
    type: 'SessionEnded',
    ...envelope(s, at + 1_000, s === 4 ? web : api),
    userMessageCount: 1,
    durationS: 60,
    reason: 'exit',
  }));
  const memory = (memoryId: string, staleAt: number | null, lastAccessedAt: number) => ({
    memoryId: `${tenantId}-${memoryId}`,
    tenantId,
    projectId: api,
    content: 'refresh.ts retries twice',
    staleAt,
    lastAccessedAt,
    accessCount: 0,
    provenanceSessionIds: [session(9)],
  });
  return {
    prompts,
    toolCalls,
    sessionEnds,
    memories: [
      memory('m-served-stale', T0, T0 - DAY),
      memory('m-stale-unserved', T0 + DAY, T0),
      memory('m-fresh', null, T0 - DAY),
    ],
    accesses: ['m-served-stale', 'm-fresh'].map((id) => ({
      tenantId,
      projectId: api,
      memoryId: `${tenantId}-${id}`,
      increment: 3,
      lastAccessedAt: T0 + DAY,
    })),
  };
}

export function describeFrictionSourceContract(
  name: string,
  makeFixture: () => Promise<FrictionSourceFixture>,
): void {
  describe(`FrictionSource contract: ${name}`, () => {
    let fixture: FrictionSourceFixture;
    let source: FrictionSource;
    let tenantId: string;
    let data: FrictionContractData;
    const gap = (signal: FrictionSignal) => source.gaps().find((g) => g.signal === signal);
    const scope = (): FrictionScope => ({ kind: 'tenant', tenantId });
    const session = (n: number) => `${tenantId}-s${n}`;

    beforeAll(async () => {
      fixture = await makeFixture();
      tenantId = fixture.tenant('friction');
      data = frictionContractData(tenantId);
      source = await fixture.replay(data);
    }, 120_000);
    afterAll(async () => {
      await source?.close();
      await fixture?.close();
    });

    it('should count the sessions and events of the window and scope', async () => {
      const inWindow = (at: number) => at >= WINDOW.from && at < WINDOW.to;
      const events = gap('totals')
        ? // Documented: the user turns and the tool calls of the window.
          data.prompts.filter((p) => p.source === 'user' && inWindow(p.timestamp)).length +
          data.toolCalls.filter((c) => inWindow(c.timestamp)).length
        : [...data.prompts, ...data.toolCalls, ...data.sessionEnds].filter((e) =>
            inWindow(e.timestamp),
          ).length;
      expect(await source.totals(WINDOW, scope())).toEqual({ sessions: 4, events });
      const api = await source.totals(WINDOW, {
        kind: 'project',
        projectId: `${tenantId}/api`,
        tenantId,
      });
      expect(api.sessions).toBe(3);
    });

    it('should group the failures by tenant-wide error pattern, a row per project', async () => {
      const rows = await source.failurePatterns(WINDOW, scope(), SETTINGS);
      const common = rows.map((row) => ({
        projectId: row.projectId,
        toolName: row.toolName,
        normalisedError: row.normalisedError,
        sessions: row.sessions,
        occurrences: row.occurrences,
        sessionIds: row.sessionIds,
        agentIds: row.agentIds,
      }));
      expect(common).toEqual([
        {
          projectId: `${tenantId}/api`,
          toolName: 'Bash',
          normalisedError: 'ECONNREFUSED <n>:<n> in <path>',
          sessions: 3,
          occurrences: 3,
          sessionIds: [session(1), session(2)],
          agentIds: ['codex'],
        },
        {
          projectId: `${tenantId}/web`,
          toolName: 'Bash',
          normalisedError: 'ECONNREFUSED <n>:<n> in <path>',
          sessions: 1,
          occurrences: 1,
          sessionIds: [session(4)],
          agentIds: ['codex'],
        },
        {
          projectId: `${tenantId}/api`,
          toolName: 'Bash',
          normalisedError: 'flaky run <n>',
          sessions: 2,
          occurrences: 6,
          sessionIds: [session(1), session(2)],
          agentIds: ['codex'],
        },
      ]);
      for (const row of rows) {
        expect(row.tenantId).toBe(tenantId);
        expect(row.firstAt).toBeGreaterThanOrEqual(T0);
        expect(row.lastAt).toBeGreaterThanOrEqual(row.firstAt);
        expect(row.lastAt).toBeLessThan(WINDOW.to);
        expect(row.sampleMessage).toMatch(/^(ECONNREFUSED|flaky run)/);
      }
      // The cost and evidence of the calls themselves, in every source.
      expect(gap('failure-cost')).toBeUndefined();
      expect(rows[0]).toMatchObject({
        durationMs: 18_000,
        tokens: 300,
        firstAt: T0,
        lastAt: T0 + 2_000,
        eventIds: [data.toolCalls[0].eventId, data.toolCalls[1].eventId],
        sampleMessage: 'ECONNREFUSED 10.0.0.1:5432 in /tmp/c3/db.ts',
        sampleCommand: 'npm run migrate',
      });
    });

    it('should find retry loops within one user turn only, with their cost (all sources)', async () => {
      const rows = await source.retryLoops(WINDOW, scope(), SETTINGS);
      expect(gap('retry-loops')).toBeUndefined();
      expect(rows).toEqual([
        {
          tenantId,
          projectId: `${tenantId}/api`,
          toolName: 'Bash',
          command: 'make e2e',
          sessions: 2,
          occurrences: 6,
          durationMs: 36_000,
          tokens: 600,
          firstAt: T0 + 10_000,
          lastAt: T0 + 10_002,
          sessionIds: [session(1), session(2)],
          // The first failed call of each session's loop (maxEvidence 2).
          eventIds: [data.toolCalls[4].eventId, data.toolCalls[7].eventId],
          agentIds: ['codex'],
        },
      ]);
    });

    it('should count the failed calls of recurring patterns and retry loops per day', async () => {
      const timeline = await source.failureTimeline(WINDOW, scope(), SETTINGS);
      expect(gap('failure-timeline')).toBeUndefined();
      // 3 + 1 migrate errors and the 6 "flaky run <n>" ones; the loop's 6 as tool misuse.
      expect(timeline).toEqual([
        { day: '2026-11-20', count: 10, kind: 'recurring-failure' },
        { day: '2026-11-20', count: 6, kind: 'tool-misuse' },
      ]);
      // The project scope narrows both (web has the one migrate error, in one session).
      const web = await source.failureTimeline(
        WINDOW,
        { kind: 'project', projectId: `${tenantId}/web`, tenantId },
        { ...SETTINGS, minSessionsPerFinding: 1 },
      );
      expect(web).toEqual([{ day: '2026-11-20', count: 1, kind: 'recurring-failure' }]);
    });

    it("should stream only the users' corrections, in time order", async () => {
      const rows: CorrectionRow[] = [];
      const count = await source.corrections(WINDOW, scope(), { add: (row) => rows.push(row) });
      const expected = data.prompts
        .filter((p) => p.source === 'user')
        .flatMap((p) => {
          const correction = userCorrectionOf(p.text);
          return correction === null
            ? []
            : [
                {
                  ...correction,
                  tenantId,
                  projectId: p.projectId,
                  sessionId: p.sessionId,
                  eventId: p.eventId,
                  agentId: p.agentId,
                  at: p.timestamp,
                },
              ];
        })
        .sort((a, b) => a.at - b.at || a.eventId.localeCompare(b.eventId));
      expect(rows.map((row) => row.sessionId)).toEqual([session(1), session(3)]);
      expect(rows).toEqual(expected);
      expect(count).toBe(2);
    });

    it('should read the stale memories served after they went stale', async () => {
      expect(await source.staleMemories(WINDOW, scope())).toEqual([
        {
          tenantId,
          projectId: `${tenantId}/api`,
          memoryId: `${tenantId}-m-served-stale`,
          memoryType: 'gotcha',
          content: 'refresh.ts retries twice',
          staleAt: T0,
          lastAccessedAt: T0 + DAY,
          accessCount: 3,
          provenanceSessionIds: [session(9)],
        },
      ]);
    });

    it('should make a report that names every gap of the source', async () => {
      const outcome = await frictionReportFrom(source, {
        window: WINDOW,
        scope: scope(),
        settings: SETTINGS,
      });
      if (outcome.kind !== 'report') throw new Error(outcome.shortfall.message);
      const kinds = outcome.report.proposals.map((p) => p.kind).sort();
      expect(kinds).toEqual(
        expect.arrayContaining(['recurring-failure', 'repeated-correction', 'stale-memory']),
      );
      for (const proposal of outcome.report.proposals) {
        const evidence = proposal.evidence;
        expect(evidence.sessionIds.length + evidence.memoryIds.length).toBeGreaterThan(0);
      }
      // Every gap of the source, named in the report (the report may add the detectors' own).
      expect(outcome.report.unavailable ?? []).toEqual(expect.arrayContaining([...source.gaps()]));
      if (source.gaps().length > 0) expect(outcome.report.unavailable).toBeDefined();
    });
  });
}
