import { describe, expect, it } from 'vitest';
import { normaliseErrorMessage } from '../observation/error-normalisation';
import {
  checkoutPath,
  configRepairOf,
  isConfigFile,
  setupCommandOf,
} from './config-drift-classify';
import { detectConfigurationDrift, driftTimeline, type ConfigRepairRow } from './config-drift';
import { clusterFindings, frictionProposals } from './friction-report';
import { DEFAULT_FRICTION_SETTINGS } from './friction-settings';
import { detectRecurringFailures } from './recurring-failures';

const settings = DEFAULT_FRICTION_SETTINGS;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 20, 9);
const MESSAGE = 'Error: Missing environment variable DATABASE_URL (read /tmp/run-81/.env)';

function repair(overrides: Partial<ConfigRepairRow>): ConfigRepairRow {
  return {
    tenantId: 'acme',
    projectId: 'acme/api',
    repairKind: 'config-edit',
    repair: '.env',
    failureTool: 'Bash',
    normalisedError: normaliseErrorMessage(MESSAGE),
    sampleMessage: MESSAGE,
    sampleCommand: 'npm run dev',
    sessions: 3,
    occurrences: 3,
    durationMs: 30_000,
    tokens: 0,
    firstAt: T0,
    lastAt: T0 + 2 * DAY,
    sessionIds: ['s-1', 's-2', 's-3'],
    eventIds: ['e-1', 'e-2'],
    agentIds: ['claude-code'],
    ...overrides,
  };
}

describe('configRepairOf', () => {
  it('should take edits of configuration files and setup commands as repairs', () => {
    const cwd = '/home/ana/acme/api';
    expect(
      configRepairOf({ toolName: 'Edit', command: null, filePaths: [`${cwd}/.env`] }, cwd),
    ).toEqual({ kind: 'config-edit', target: '.env' });
    expect(
      configRepairOf(
        { toolName: 'Write', command: null, filePaths: ['/home/ana/.config/app/settings.toml'] },
        cwd,
      ),
    ).toEqual({ kind: 'config-edit', target: '~/.config/app/settings.toml' });
    expect(
      configRepairOf(
        { toolName: 'Bash', command: ' pip  install -r requirements.txt', filePaths: [] },
        cwd,
      ),
    ).toEqual({ kind: 'setup-command', target: 'pip install -r requirements.txt' });
  });

  it('should not take reads, source edits or ordinary commands as repairs', () => {
    const cwd = '/home/ana/acme/api';
    expect(
      configRepairOf({ toolName: 'Read', command: null, filePaths: ['.env'] }, cwd),
    ).toBeNull();
    expect(
      configRepairOf({ toolName: 'Edit', command: null, filePaths: ['src/auth/token.ts'] }, cwd),
    ).toBeNull();
    expect(
      configRepairOf({ toolName: 'Bash', command: 'npm test', filePaths: [] }, cwd),
    ).toBeNull();
    expect(
      configRepairOf({ toolName: 'Bash', command: 'make e2e', filePaths: [] }, cwd),
    ).toBeNull();
  });

  it('should know configuration files by name, shape and directory', () => {
    const configs = [
      '.env',
      '.env.local',
      '.npmrc',
      'docker-compose.yml',
      'compose.dev.yaml',
      'vite.config.ts',
      'package.json',
      'tsconfig.build.json',
      'config/database.json',
      '.github/workflows/ci.yml',
      'deploy/worker.plist',
    ];
    expect(configs.filter((path) => !isConfigFile(path))).toEqual([]);
    const others = ['src/index.ts', 'README.md', 'data/users.json', 'src/env.ts'];
    expect(others.filter(isConfigFile)).toEqual([]);
  });

  it('should tell setup commands from other commands', () => {
    expect(setupCommandOf('sudo systemctl restart worker')).toBe('sudo systemctl restart worker');
    expect(setupCommandOf('docker compose up -d db')).toBe('docker compose up -d db');
    expect(setupCommandOf('./scripts/setup-dev.sh')).toBe('./scripts/setup-dev.sh');
    expect(setupCommandOf('npm run build')).toBeNull();
    expect(setupCommandOf('git push')).toBeNull();
    expect(setupCommandOf('   ')).toBeNull();
  });

  it('should write paths as in every checkout', () => {
    expect(checkoutPath('/home/bo/work/api/config/app.yaml', '/home/bo/work/api')).toBe(
      'config/app.yaml',
    );
    expect(checkoutPath('/Users/bo/.zshrc', '/Users/bo/work/api')).toBe('~/.zshrc');
    expect(checkoutPath('./.env', null)).toBe('.env');
  });
});

describe('detectConfigurationDrift', () => {
  it('should report one repair after the same error in enough sessions, with its evidence', () => {
    const [finding, ...rest] = detectConfigurationDrift([repair({})], settings);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({
      kind: 'configuration-drift',
      projectIds: ['acme/api'],
      sessions: 3,
      evidence: { sessionIds: ['s-1', 's-2', 's-3'], eventIds: ['e-1', 'e-2'] },
      confidence: 0.6,
    });
    expect(finding.title).toContain('`.env`');
    expect(finding.proposedLines.join('\n')).toContain('commit the fix to `.env`');
  });

  it('should join the repairs of one error pattern into one finding', () => {
    const findings = detectConfigurationDrift(
      [
        repair({ sessions: 4 }),
        repair({
          repairKind: 'setup-command',
          repair: 'docker compose restart api',
          sessionIds: ['s-7'],
          eventIds: ['e-7'],
        }),
      ],
      settings,
    );
    expect(findings).toHaveLength(1);
    expect(findings[0].sessions).toBe(4);
    expect(findings[0].cost.occurrences).toBe(6);
    expect(findings[0].summary).toContain('`docker compose restart api` in 3 sessions');
    expect(findings[0].evidence.eventIds).toEqual(['e-1', 'e-2', 'e-7']);
  });

  it('should not fire below minDriftSessions, on empty patterns, or join other projects', () => {
    expect(detectConfigurationDrift([repair({ sessions: 2 })], settings)).toEqual([]);
    expect(detectConfigurationDrift([repair({ normalisedError: ' ' })], settings)).toEqual([]);
    const split = detectConfigurationDrift(
      [repair({}), repair({ projectId: 'acme/web' })],
      settings,
    );
    expect(split.map((f) => f.projectIds)).toEqual([['acme/api'], ['acme/web']]);
  });

  it('should count the repairs of reported drifts per day, and only those', () => {
    const rows = [
      repair({ days: { '2026-11-20': 2, '2026-11-21': 1 } }),
      repair({ repair: 'docker compose up -d', days: { '2026-11-21': 3 } }),
      repair({ repair: '.npmrc', sessions: 2, days: { '2026-11-20': 9 } }),
    ];
    expect(driftTimeline(rows, settings)).toEqual([
      { day: '2026-11-20', kind: 'configuration-drift', count: 2 },
      { day: '2026-11-21', kind: 'configuration-drift', count: 4 },
    ]);
  });

  it('should cluster with the recurring failure of the same command into one proposal', () => {
    const failures = detectRecurringFailures(
      [
        {
          tenantId: 'acme',
          projectId: 'acme/api',
          toolName: 'Bash',
          normalisedError: normaliseErrorMessage(MESSAGE),
          sampleMessage: MESSAGE,
          sampleCommand: 'npm run dev',
          sessions: 5,
          occurrences: 5,
          durationMs: 10_000,
          tokens: 0,
          firstAt: T0,
          lastAt: T0 + DAY,
          sessionIds: ['s-1', 's-9'],
          eventIds: ['e-1', 'e-9'],
          agentIds: ['codex'],
        },
      ],
      settings,
    );
    const drift = detectConfigurationDrift([repair({})], settings);
    const clustered = clusterFindings([...failures, ...drift], settings.maxEvidence);
    expect(clustered).toHaveLength(1);
    const kinds = [clustered[0].kind, ...clustered[0].alsoSeenAs].sort();
    expect(kinds).toEqual(['configuration-drift', 'recurring-failure']);
    const [proposal] = frictionProposals(clustered, { from: T0, to: T0 + 7 * DAY });
    expect(proposal.target).toBe('AGENTS.md');
    expect(proposal.change.kind === 'file' && proposal.change.patch).toContain('`.env`');
  });
});
