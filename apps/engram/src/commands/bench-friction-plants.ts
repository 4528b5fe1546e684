import type { FrictionKind, FrictionReport } from '@engram/core';
import type { Rng } from './bench-friction-rng';

/**
 * The frictions `engram bench friction` plants in its generated organisation, and the decoys it
 * plants beside them that look alike but are no friction (the report must not propose them).
 */

/** The fields of a ToolCallObserved the generator sets (the rest are defaults). */
export type CallFields = Record<string, unknown>;

/** A planted friction: what the generator writes, and how a proposal is recognised as it. */
export interface Planted {
  kind: Exclude<FrictionKind, 'stale-memory'>;
  project: string;
  /** Share of the project's sessions it happens in. */
  share: number;
  command?: string;
  error?: (rng: Rng) => string;
  phrasings?: string[];
  /** Configuration drift: the calls that repair the environment after `command` failed. */
  repair?: CallFields[];
  /** Missing skill: the recipe's calls, in order. */
  recipe?: (rng: Rng) => CallFields[];
  /** A word the proposal's title or summary must contain. */
  marker: string;
}

/** A decoy: planted in `sessions` sessions of its project (or a share of them), never reported. */
export interface Decoy {
  /** The kind of proposal it would be mistaken for. */
  kind: Planted['kind'];
  project: string;
  /** Exactly this many sessions (the first ones of the project), or … */
  sessions?: number;
  /** … this share of the project's sessions. */
  share?: number;
  /** The user turns it writes (each a prompt and its calls). */
  turns: (rng: Rng) => { prompt: string; calls: CallFields[] }[];
  marker: string;
  why: string;
}

const sha = (rng: Rng) => (0x1000000 + rng.int(0xeffffff)).toString(16);

const RELEASE = (): CallFields[] => [
  { command: 'git pull --rebase' },
  { toolName: 'Edit', filePaths: ['CHANGELOG.md'] },
  { command: 'npm version patch' },
  { command: 'git push --follow-tags' },
  { command: 'npm publish' },
];

export const PLANTED: Planted[] = [
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
  {
    kind: 'configuration-drift',
    project: 'org/project-1',
    share: 0.05,
    command: 'npm run dev',
    error: (rng) =>
      `Error: Missing environment variable DATABASE_URL (loaded /home/dev-${rng.int(50)}/app/.env)`,
    repair: [
      { toolName: 'Read', filePaths: ['.env'] },
      { toolName: 'Edit', filePaths: ['.env'] },
    ],
    marker: '.env',
  },
  {
    kind: 'configuration-drift',
    project: 'org/project-8',
    share: 0.05,
    command: 'pytest',
    error: () => "ModuleNotFoundError: No module named 'requests_cache'",
    repair: [{ command: 'pip install -r requirements.txt' }],
    marker: 'pip install',
  },
  {
    kind: 'missing-skill',
    project: 'org/project-4',
    share: 0.05,
    recipe: RELEASE,
    marker: 'npm publish',
  },
  {
    kind: 'missing-skill',
    project: 'org/project-7',
    share: 0.05,
    recipe: (rng) => {
      const image = `registry.example/app:${sha(rng)}`;
      return [
        { command: `docker build -t ${image} .` },
        { command: `docker push ${image}` },
        { command: `kubectl set image deployment/app app=${image}` },
        { command: 'kubectl rollout status deployment/app' },
      ];
    },
    marker: 'kubectl rollout',
  },
];

export const DECOYS: Decoy[] = [
  {
    kind: 'configuration-drift',
    project: 'org/project-2',
    share: 0.1,
    turns: () => [
      { prompt: 'set LOG_LEVEL to debug', calls: [{ toolName: 'Edit', filePaths: ['.env'] }] },
    ],
    marker: '.env',
    why: 'a config file edited with no failure before it',
  },
  {
    kind: 'configuration-drift',
    project: 'org/project-3',
    share: 0.1,
    // The failure is project-3's planted recurring one: only the pairing is wrong.
    turns: (rng) => [
      {
        prompt: 'typecheck',
        calls: [
          { command: 'npx tsc --noEmit', outcome: 'error', errorMessage: PLANTED[1].error?.(rng) },
        ],
      },
      { prompt: 'reinstall the dependencies', calls: [{ command: 'npm ci' }] },
    ],
    marker: 'npm ci',
    why: 'a setup command after a failure of another turn',
  },
  {
    kind: 'configuration-drift',
    project: 'org/project-9',
    sessions: 2,
    turns: () => [
      {
        prompt: 'start the worker',
        calls: [
          {
            command: 'npm run worker',
            outcome: 'error',
            errorMessage: 'Error: REDIS_URL is not set',
          },
          { toolName: 'Edit', filePaths: ['.env.local'] },
        ],
      },
    ],
    marker: '.env.local',
    why: 'a drift in fewer than minDriftSessions sessions',
  },
  {
    kind: 'missing-skill',
    project: 'org/project-0',
    sessions: 4,
    turns: () => [{ prompt: 'cut a release', calls: RELEASE() }],
    marker: 'npm publish',
    why: 'a recipe in fewer than minRecipeSessions sessions',
  },
  {
    kind: 'missing-skill',
    project: 'org/project-5',
    share: 0.3,
    turns: () => [
      {
        prompt: 'commit this',
        calls: [{ command: 'git add -A' }, { command: 'git commit -m "wip"' }],
      },
    ],
    marker: 'git commit',
    why: 'a sequence of two calls (a recipe has three or more)',
  },
];

/** A proposal that is `planted` (or the decoy): its kind, project and marker. */
function reported(report: FrictionReport, p: Pick<Planted, 'kind' | 'project' | 'marker'>) {
  return report.proposals.some(
    (proposal) =>
      (proposal.kind === p.kind || proposal.alsoSeenAs.includes(p.kind)) &&
      proposal.projectIds.includes(p.project) &&
      `${proposal.title} ${proposal.summary}`.includes(p.marker),
  );
}

/** How many planted frictions the report found, and which decoys it wrongly proposed. */
export function plantedFound(report: FrictionReport): {
  planted: number;
  found: number;
  missed: string[];
  decoysReported: string[];
} {
  const missed = PLANTED.filter((p) => !reported(report, p));
  return {
    planted: PLANTED.length,
    found: PLANTED.length - missed.length,
    missed: missed.map((p) => `${p.kind} ${p.project} ${p.marker}`),
    decoysReported: DECOYS.filter((d) => reported(report, d)).map((d) => `${d.kind}: ${d.why}`),
  };
}
