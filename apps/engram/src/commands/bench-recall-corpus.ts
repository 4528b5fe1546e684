import type { Embedder } from '@engram/ai';
import type { Memory, MemoryType } from '@engram/contracts';
import { NO_MEMORY_DETAILS } from '@engram/core';
import { random } from './bench-observe';

// The synthetic corpus of `engram bench recall` (embedded and distributed).
//
// The corpus is synthetic: memories written from a vocabulary of modules and concerns, and
// vectors drawn around one centre per (module, concern) — themselves around one centre per
// module — so that neighbours are clustered like sentence embeddings (unrelated pairs ≈ 0,
// same concern ≈ 0.5), not uniform noise on which every index looks perfect. Embedding 100k
// texts with the real model would take minutes on this machine; the real model's query
// embedding time is measured on its own and reported beside the search figures.

export const DIMS = 384;
export const MODEL = 'bench-synthetic-clustered@384';
export const TENANT = 'bench';
export const PROJECT = 'bench/repo';

const MODULES = [
  'auth token refresh',
  'billing invoices',
  'search indexer',
  'kafka consumer',
  'session segmenter',
  'payment webhooks',
  'user profile cache',
  'graphql gateway',
  'email notifications',
  'feature flags',
  'rate limiter',
  'file uploads',
  'audit log',
  'report exports',
  'onboarding wizard',
  'websocket presence',
  'sqlite migrations',
  'docker build',
  'ci pipeline',
  'i18n catalogue',
  'oauth callback',
  'pdf renderer',
  'image thumbnails',
  'cron scheduler',
  'elasticsearch mapping',
  'redis locks',
  'csv importer',
  'admin dashboard',
  'mobile push',
  'tenant isolation',
  'api pagination',
  'retry backoff',
  'schema registry',
  'neo4j graph writer',
  'embedding model',
  'hook spool',
  'pricing table',
  'dark mode theme',
  'access control',
  'backup restore',
] as const;

const CONCERNS = [
  ['fails after a restart', 'clear the stale lock file before start'],
  ['times out under load', 'raise the pool size and add a deadline'],
  ['returns duplicates', 'deduplicate by the deterministic id'],
  ['leaks memory', 'close the cursor in a finally block'],
  ['breaks on unicode input', 'normalise to NFC before comparing'],
  ['is flaky in CI', 'fake the clock instead of sleeping'],
  ['loses the last batch', 'flush before committing the offset'],
  ['ignores the tenant', 'always filter on tenantId and projectId'],
  ['needs the feature flag', 'read the flag once per request'],
  ['is slow on large inputs', 'stream instead of buffering everything'],
  ['logs secrets', 'redact tokens before logging'],
  ['races with logout', 'serialise refresh and logout on one mutex'],
  ['breaks after the upgrade', 'pin the client to the server major version'],
  ['drops events on rebalance', 'commit only after the handler returned'],
  ['has wrong time zones', 'store epoch millis and format at the edge'],
  ['retries forever', 'classify the error before retrying'],
  ['is not idempotent', 'upsert by explicit id'],
  ['misses the cache', 'key the cache by the normalised query'],
  ['fails the contract test', 'update the schema and the fixture together'],
  ['blocks the event loop', 'move the work to a worker thread'],
  ['sorts unstably', 'break ties by id'],
  ['exceeds the payload limit', 'split into bounded batches'],
  ['needs a migration', 'add the column with a default first'],
  ['crashes on empty input', 'return early on an empty list'],
  ['uses the wrong config', 'validate the config at start-up'],
] as const;

const TYPES: MemoryType[] = ['gotcha', 'decision', 'pattern', 'error_pattern', 'module_insight'];

/** What the corpus is, as the reports say it. */
export const CORPUS_DESCRIPTION = `synthetic: ${MODULES.length}×${CONCERNS.length} clustered topics, ${DIMS}-d vectors`;

function gaussian(next: () => number): number {
  const u = 1 - next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

/** `base` plus isotropic noise of the given norm, unit length. */
function around(next: () => number, base: Float32Array, noise: number): Float32Array {
  const v = new Float32Array(DIMS);
  let sum = 0;
  for (let i = 0; i < DIMS; i += 1) {
    v[i] = base[i] + (noise * gaussian(next)) / Math.sqrt(DIMS);
    sum += v[i] * v[i];
  }
  const length = Math.sqrt(sum);
  for (let i = 0; i < DIMS; i += 1) v[i] /= length;
  return v;
}

/** One centre per module, one per (module, concern) around it. */
function centres(next: () => number): Float32Array[][] {
  const zero = new Float32Array(DIMS);
  return MODULES.map(() => {
    const module = around(next, zero, 1);
    return CONCERNS.map(() => around(next, module, 1));
  });
}

export interface RecallCorpus {
  memories: { memory: Memory; vector: Float32Array }[];
  queries: { text: string; vector: Float32Array }[];
}

/**
 * `size` memories and `queries` questions about them, each with its clustered vector. With
 * `distinctTexts`, no two questions are the same text (phrasings × modules × concerns, drawn
 * without replacement): a recall server embeds a text it has seen from its cache, and a
 * measurement of the model's share must not.
 */
export function syntheticRecallCorpus(
  size: number,
  queries: number,
  { distinctTexts = false }: { distinctTexts?: boolean } = {},
): RecallCorpus {
  const next = random(7);
  const centre = centres(next);
  const start = Date.UTC(2026, 9, 1);
  const memories = Array.from({ length: size }, (_, i) => {
    const m = Math.floor(next() * MODULES.length);
    const c = Math.floor(next() * CONCERNS.length);
    const [problem, fix] = CONCERNS[c];
    const file = `src/${MODULES[m].split(' ')[0]}/${MODULES[m].split(' ').at(-1)}-${i % 7}.ts`;
    const memory: Memory = {
      eventId: `bench-event-${i}`,
      tenantId: TENANT,
      projectId: PROJECT,
      sessionId: `bench-session-${i % 997}`,
      agentId: 'engram-distiller',
      userId: null,
      timestamp: start + i * 60_000,
      schemaVersion: 1,
      memoryType: TYPES[i % TYPES.length],
      content: `the ${MODULES[m]} ${problem} (${file}): ${fix}`,
      confidence: 0.5 + next() * 0.5,
      tags: [MODULES[m].split(' ')[0]],
      relatedFiles: [file],
      relatedModules: [MODULES[m].split(' ')[0]],
      createdAt: start + i * 60_000,
      lastAccessedAt: start + i * 60_000,
      accessCount: Math.floor(next() * 5),
      workUnitRef: null,
      scope: 'module',
      source: 'distilled',
      episodeId: null,
      commitSha: null,
      provenanceSessionIds: [],
      sourceEventIds: [],
      targetNodeId: null,
      relations: [],
      decayHalfLifeDays: null,
      needsReview: false,
      userVerified: false,
      citationText: null,
      staleAt: null,
      embedding: null,
      embeddingModel: null,
      ...NO_MEMORY_DETAILS,
      memoryId: `bench-memory-${i}`,
    };
    return { memory, vector: around(next, centre[m][c], 0.9) };
  });
  const topics = distinctTexts ? distinctQuestions(next, queries) : null;
  const questions = Array.from({ length: queries }, (_, i) => {
    const [phrasing, m, c] = topics?.[i] ?? [
      0,
      Math.floor(next() * MODULES.length),
      Math.floor(next() * CONCERNS.length),
    ];
    return {
      text: QUESTION_PHRASINGS[phrasing](MODULES[m], CONCERNS[c][0]),
      vector: around(next, centre[m][c], 1.1),
    };
  });
  return { memories, queries: questions };
}

const QUESTION_PHRASINGS = [
  (module: string, problem: string) => `why does the ${module} ${problem}?`,
  (module: string, problem: string) => `how come the ${module} ${problem}?`,
  (module: string, problem: string) => `what to do when the ${module} ${problem}?`,
];

/** How many different questions `distinctTexts` can draw. */
export const DISTINCT_QUESTIONS = QUESTION_PHRASINGS.length * MODULES.length * CONCERNS.length;

/**
 * `count` warm-up queries, none with the text of a measured one (the server's query cache would
 * answer it without the model): the spare distinct questions, then again with a round suffix.
 * Without spares, the measured questions with a suffix from the first round.
 */
export function warmupQueries(
  spare: RecallCorpus['queries'],
  measured: RecallCorpus['queries'],
  count: number,
): RecallCorpus['queries'] {
  const base = spare.length > 0 ? spare : measured;
  const firstRound = spare.length > 0 ? 0 : 1;
  return Array.from({ length: count }, (_, i) => {
    const query = base[i % base.length];
    const round = firstRound + Math.floor(i / base.length);
    return round === 0 ? query : { ...query, text: `${query.text} (again ${round})` };
  });
}

/** `count` different (phrasing, module, concern) triples, in a seeded random order. */
function distinctQuestions(next: () => number, count: number): [number, number, number][] {
  const all: [number, number, number][] = QUESTION_PHRASINGS.flatMap((_, p) =>
    MODULES.flatMap((_m, m) => CONCERNS.map((_c, c): [number, number, number] => [p, m, c])),
  );
  if (count > all.length) {
    throw new RangeError(`at most ${all.length} distinct questions, ${count} asked`);
  }
  for (let i = all.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all.slice(0, count);
}

/** The queries' vectors as an embedder: RecallService embeds through it, like the real model. */
export function lookupEmbedder(queries: RecallCorpus['queries']): Embedder {
  const byText = new Map(queries.map((q) => [q.text, q.vector]));
  return {
    id: MODEL,
    dims: DIMS,
    embed: (texts) =>
      Promise.resolve(
        texts.map((text) => {
          const vector = byText.get(text);
          if (!vector) throw new Error(`bench: no vector for "${text}"`);
          return vector;
        }),
      ),
  };
}
