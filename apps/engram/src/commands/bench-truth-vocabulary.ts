// `engram bench truth`, the words of the generated projects: modules, components, transports,
// libraries, conventions, and the phrasings of a change (with a cue such as "no longer" or
// "replaced", or none: the newer note just states the new fact).

export const MODULES = [
  'billing',
  'search',
  'notifications',
  'auth',
  'orders',
  'inventory',
  'payments',
  'reporting',
  'checkout',
  'profiles',
  'shipping',
  'analytics',
  'scheduler',
  'uploads',
  'gateway',
  'ledger',
] as const;
export const COMPONENTS = [
  'price cache',
  'retry queue',
  'token store',
  'rate limiter',
  'session map',
  'webhook signer',
  'cursor paginator',
  'batch writer',
  'feature flag loader',
  'currency formatter',
] as const;
export const RENAME_GOTCHAS = [
  'must be flushed before the schema migration runs, or old rows come back',
  'keys its entries by tenant and user, so a missing tenant id silently shares entries',
  'is not safe to call from two workers at once; wrap it in the job lock',
  'reads its timeout from the environment once at start-up; changing it needs a restart',
] as const;
export const PARSED = [
  'csv',
  'cookie',
  'header',
  'invoice',
  'address',
  'date',
  'query string',
] as const;
export const TRANSPORTS = [
  'REST with JSON bodies',
  'gRPC',
  'GraphQL',
  'a Kafka topic',
  'server-sent events',
  'a shared Postgres table',
] as const;
export const LIBRARIES: readonly (readonly [string, readonly string[]])[] = [
  ['HTTP requests', ['axios', 'undici', 'got', 'node-fetch']],
  ['date handling', ['moment', 'dayjs', 'date-fns', 'luxon']],
  ['logging', ['winston', 'pino', 'bunyan']],
  ['schema validation', ['joi', 'zod', 'yup', 'ajv']],
  ['database access', ['typeorm', 'prisma', 'knex', 'sequelize']],
  ['background jobs', ['bull', 'bullmq', 'agenda']],
];
export const CONVENTIONS: readonly (readonly [string, string, string])[] = [
  [
    'unit tests',
    'live next to the source file as *.spec.ts',
    'go under test/unit, mirroring the source tree',
  ],
  [
    'error handling',
    'services throw typed errors from libs/errors',
    'services return Result objects and never throw',
  ],
  ['file names', 'use camelCase', 'use kebab-case'],
  ['imports', 'use relative paths between folders', 'use the @app path aliases between folders'],
  [
    'commit messages',
    'follow Conventional Commits',
    'start with the issue number and an imperative verb',
  ],
  [
    'API responses',
    'wrap every payload in a data envelope',
    'return bare payloads with HTTP status codes',
  ],
];
export const LOCKED_OPS = [
  'invoice numbering',
  'refund settlement',
  'stock reservation',
  'quota reset',
];
export const LOCKS = ['advisory', 'ledger row', 'tenant mutex', 'redis'];
export const DISTRACTORS = [
  'The {m} dashboard queries hit the read replica; writes must go to the primary',
  'Feature work in {m} needs a design review before the first pull request',
  'The {m} e2e suite is flaky on CI when two suites share the seed database',
  'Error codes of {m} are documented in docs/errors.md and must stay stable',
  'The {m} service emits metrics with the prefix {m}_ and a tenant label',
  'Never log full card numbers in {m}; mask all but the last four digits',
  'The {m} nightly export runs at 02:00 UTC and locks the archive bucket',
  'Integration tests of {m} need the local broker started with npm run infra:up',
] as const;

export const REVERSAL_CUES = [
  (m: string, p: string, a: string, b: string) =>
    `${cap(m)} no longer talks to ${p} over ${a}; it talks to ${p} over ${b} instead`,
  (m: string, p: string, a: string, b: string) =>
    `Decision reversed: ${m} switched from ${a} to ${b} to talk to ${p}`,
  (m: string, p: string, a: string, b: string) =>
    `${cap(m)} replaced ${a} with ${b} for talking to ${p}`,
  // No cue: the newer note just states the new fact.
  (m: string, p: string, _a: string, b: string) => `${cap(m)} talks to ${p} over ${b}`,
];
export const SWAP_CUES = [
  (m: string, area: string, a: string, b: string) =>
    `${cap(m)} replaced ${a} with ${b} for ${area}; ${a} is no longer a dependency`,
  (m: string, area: string, a: string, b: string) =>
    `${cap(m)} now uses ${b} instead of ${a} for ${area}`,
  (m: string, area: string, a: string, b: string) => `${cap(m)} migrated ${area} from ${a} to ${b}`,
  (m: string, area: string, _a: string, b: string) => `${cap(m)} uses ${b} for ${area}`,
];
export const CONVENTION_CUES = [
  (t: string, a: string, b: string) =>
    `New convention for ${t}: ${b}, instead of the old rule (${a})`,
  (t: string, a: string, b: string) => `Convention for ${t} changed: ${b}; we no longer ${a}`,
  (t: string, _a: string, b: string) => `Convention for ${t} replaced: from now on ${b}`,
  (t: string, _a: string, b: string) => `Convention for ${t}: ${b}`,
];

export function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
