import {
  DEFAULT_FRICTION_SETTINGS,
  detectConfigurationDrift,
  detectMissingSkills,
  type FrictionScope,
  type FrictionSettings,
} from '@engram/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEventLog } from './sqlite-event-log';
import { SqliteFrictionSource } from './sqlite-friction-source';
import { ALL, DAY, FRICTION_TOPICS as TOPICS, T0, WINDOW } from './sqlite-friction.fixture';

// The configuration-drift and missing-skill reads on a real events.db: what the SQL pairs and
// groups, and the decoys it must leave out.

const settings: FrictionSettings = { ...DEFAULT_FRICTION_SETTINGS, maxEvidence: 4 };
const RELEASE = [
  { command: 'git pull --rebase' },
  { tool: 'Edit', path: 'CHANGELOG.md' },
  { command: 'npm version patch' },
  { command: 'git push --follow-tags' },
  { command: 'npm publish' },
];

interface Call {
  tool?: string;
  command?: string;
  path?: string;
  error?: string;
}

let n = 0;
/** One user turn of a session: its calls in order, a minute apart from `at`. */
function turn(session: string, promptId: number, at: number, calls: Call[], project = 'acme/api') {
  return calls.map((c, step) => {
    n += 1;
    return {
      type: 'ToolCallObserved',
      eventId: `e-${String(n).padStart(4, '0')}`,
      tenantId: 'acme',
      projectId: project,
      sessionId: session,
      agentId: 'claude-code',
      userId: null,
      timestamp: at + step * 60_000,
      schemaVersion: 1,
      promptId,
      stepIndex: step,
      toolName: c.tool ?? 'Bash',
      filePaths: c.path === undefined ? [] : [c.path],
      command: c.command ?? null,
      argsJson: '{}',
      outcome: c.error === undefined ? 'ok' : 'error',
      errorMessage: c.error ?? null,
      durationMs: 1_000,
      tokensUsed: null,
      mcp: false,
    };
  });
}

describe('SqliteFrictionSource: configuration drift and recipes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-friction-habits-'));
  let source: SqliteFrictionSource;

  beforeAll(() => {
    const log = SqliteEventLog.open({ dataDir: dir });
    for (const topic of [TOPICS.prompts, TOPICS.toolCalls, TOPICS.lifecycle]) {
      log.ensureTopic(topic, 2);
    }
    const events = [];
    for (let s = 0; s < 6; s += 1) {
      const at = T0 + s * 3_600_000;
      const session = `s-${s}`;
      // Drift (sessions 0-3): the dev server fails on a missing variable, .env is edited, it runs.
      if (s < 4) {
        events.push(
          ...turn(session, 1, at, [
            { command: 'npm run dev', error: `Error: Missing DATABASE_URL (pid ${1000 + s})` },
            { tool: 'Read', path: '.env' },
            { tool: 'Edit', path: '.env' },
            { command: 'npm run dev' },
          ]),
        );
      }
      // Decoy: .env edited in every session with no failure before it in its turn.
      events.push(...turn(session, 2, at + 600_000, [{ tool: 'Edit', path: '.env' }]));
      // Decoy: a setup command after a failure of a turn before (another turn: no pairing).
      events.push(
        ...turn(session, 3, at + 700_000, [{ command: 'npm test', error: 'Error: 3 failed' }]),
        ...turn(session, 4, at + 800_000, [{ command: 'npm ci' }]),
      );
      // The release recipe by hand (sessions 0-4), in a turn of its own.
      if (s < 5) events.push(...turn(session, 5, at + 900_000, RELEASE));
      // Decoy: two commands in every session (too short), and the release of another project
      // in two sessions only (too few).
      events.push(
        ...turn(session, 6, at + 1_000_000, [{ command: 'git add -A' }, { command: 'git commit' }]),
      );
      if (s < 2) events.push(...turn(session, 7, at + 1_100_000, RELEASE, 'acme/web'));
    }
    log.append(
      TOPICS.toolCalls,
      events.map((event) => ({
        key: event.sessionId,
        value: JSON.stringify(event),
        timestamp: event.timestamp,
      })),
    );
    log.close();
    source = SqliteFrictionSource.open({ dataDir: dir, topics: TOPICS });
  });

  afterAll(() => {
    source.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should pair each config edit with the failure before it in its turn', () => {
    const rows = source.configRepairs(WINDOW, ALL, settings);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row).toMatchObject({
      tenantId: 'acme',
      projectId: 'acme/api',
      repairKind: 'config-edit',
      repair: '.env',
      failureTool: 'Bash',
      normalisedError: 'Error: Missing DATABASE_URL (pid <n>)',
      sampleCommand: 'npm run dev',
      sessions: 4,
      occurrences: 4,
      sessionIds: ['s-0', 's-1', 's-2', 's-3'],
      days: { '2026-11-20': 4 },
    });
    // Evidence: repair and failure events, half of the sample each.
    expect(row.eventIds).toHaveLength(4);
    const [finding] = detectConfigurationDrift(rows, settings);
    expect(finding.title).toContain('`.env`');
  });

  it('should leave out drift below minDriftSessions and outside the scope', () => {
    expect(source.configRepairs(WINDOW, ALL, { ...settings, minDriftSessions: 5 })).toEqual([]);
    const web: FrictionScope = { kind: 'project', projectId: 'acme/web', tenantId: 'acme' };
    expect(source.configRepairs(WINDOW, web, settings)).toEqual([]);
    expect(source.configRepairs({ from: T0 + 7 * DAY, to: T0 + 8 * DAY }, ALL, settings)).toEqual(
      [],
    );
  });

  it('should group consecutive runs of a turn into recipes per project', () => {
    const rows = source.recipes(WINDOW, ALL, settings);
    expect(rows.every((row) => row.projectId === 'acme/api' && row.sessions === 5)).toBe(true);
    // 3 runs of three steps, 2 of four, 1 of five; none of the two-command decoy.
    expect(rows.map((row) => row.steps.length).sort()).toEqual([3, 3, 3, 4, 4, 5]);
    const [finding, ...rest] = detectMissingSkills(rows, settings);
    expect(rest).toEqual([]);
    expect(finding.skill?.name).toBe('npm-publish');
    expect(rows.find((row) => row.steps.length === 5)).toMatchObject({
      steps: [
        '$ git pull --rebase',
        'Edit CHANGELOG.md',
        '$ npm version patch',
        '$ git push --follow-tags',
        '$ npm publish',
      ],
      occurrences: 5,
      durationMs: 5 * 5_000,
      eventIds: expect.any(Array) as unknown,
    });
  });

  it('should find no recipe when too few sessions ran it', () => {
    expect(source.recipes(WINDOW, ALL, { ...settings, minRecipeSessions: 6 })).toEqual([]);
  });
});
