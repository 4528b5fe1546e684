// Retrieval quality on public changelogs (README.md beside this file): indexes every entry of
// corpus.ts as a memory through the real indexer into a temporary embedded SQLite store with the
// real MiniLM model, then ranks each query of queries.jsonl three ways — the store's BM25 list,
// its kNN list, and RecallService's fused ranking (RRF, exact cosine, base score, phase weight) —
// and prints recall@5, recall@10 and nDCG@10 per method, then a phase-weighting demonstration,
// then one JSON line. Run: bash test/bench/retrieval-quality/run.sh [--phase P] [--rrf-k N]
// [--min-knn X] [--cosine-mix X] [--sweep] [--pool]. Needs the model (`npm run models:setup`).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbedder } from '@engram/ai';
import { MEMORY_TYPES, type Memory } from '@engram/contracts';
import {
  memoryFilters,
  modelVector,
  PHASE_WEIGHTS,
  rankingConfig,
  UNIVERSAL_PHASES,
  type RankingConfigOverrides,
  type RecallStore,
  type UniversalPhase,
} from '@engram/core';
import { SqliteRetrievalStore, sqliteStoreWriter } from '@engram/embedded';
import { CachingEmbedder } from '../../../apps/retrieval/src/caching-embedder';
import {
  candidatesPerList,
  DEFAULT_MIN_KNN_SIMILARITY,
  RecallService,
} from '../../../apps/retrieval/src/recall.service';
import { RetrievalIndexer } from '../../../apps/retrieval/src/retrieval-indexer';
import {
  delivered,
  memoryRecord,
  PROJECT,
  TENANT,
} from '../../../apps/retrieval/src/testing/records';
import { loadCorpus, type CorpusEntry } from './corpus';
import { meanScores, scoreRanking, type Labels, type Scores } from './metrics';

const K = 10;
/** Every memory was last used at NOW and never recalled: the priors are equal for all. */
const NOW = Date.UTC(2026, 10, 1, 12, 0, 0);
const SCOPE = { tenantId: TENANT, projectId: PROJECT };
const QUERIES_FILE = 'test/bench/retrieval-quality/queries.jsonl';
const KINDS = ['lexical', 'semantic', 'mixed'] as const;
/** The phase demonstration: a query whose candidates span several memory types. */
const DEMO_QUERY = 'consumer stops processing messages and the group keeps rebalancing';

interface LabelledQuery {
  id: string;
  kind: (typeof KINDS)[number];
  query: string;
  relevant: Labels;
}

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

function readQueries(file: string, corpus: ReadonlyMap<string, CorpusEntry>): LabelledQuery[] {
  const queries = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LabelledQuery);
  const unknown = queries.flatMap((q) =>
    Object.keys(q.relevant).flatMap((id) => (corpus.has(id) ? [] : [`${q.id}: ${id}`])),
  );
  if (unknown.length > 0) {
    throw new Error(`labels name entries the changelogs no longer have:\n${unknown.join('\n')}`);
  }
  return queries;
}

function memoryOf(entry: CorpusEntry): Memory {
  return memoryRecord({
    memoryId: entry.id,
    eventId: `event-${entry.id}`,
    memoryType: entry.memoryType,
    content: entry.content,
    tags: [entry.pkg],
    relatedFiles: [],
    relatedModules: [entry.pkg],
    createdAt: NOW,
    lastAccessedAt: NOW,
    accessCount: 0,
    sourceEventIds: [],
  });
}

/** Every type weighs 1 in every phase: the fused ranking without the phase table. */
function neutralPhaseWeights(): RankingConfigOverrides['phaseWeights'] {
  const row = Object.fromEntries(MEMORY_TYPES.map((type) => [type, 1]));
  return Object.fromEntries(UNIVERSAL_PHASES.map((phase) => [phase, row]));
}

/** A fused ranking to score: RecallService with this config, phase and kNN floor. */
interface Variant {
  name: string;
  phase: UniversalPhase;
  overrides: RankingConfigOverrides;
  minKnn: number;
}

/** Every phase weight w as w^e: the same preferences with a smaller swing (e < 1). */
function dampedWeights(exponent: number): RankingConfigOverrides['phaseWeights'] {
  return Object.fromEntries(
    UNIVERSAL_PHASES.map((phase) => [
      phase,
      Object.fromEntries(
        Object.entries(PHASE_WEIGHTS[phase]).map(([type, w]) => [type, (w ?? 1) ** exponent]),
      ),
    ]),
  );
}

function numberFlag(name: string): number | undefined {
  const value = flag(name);
  return value === undefined ? undefined : Number(value);
}

/**
 * The headline fused ranking (the flags' config and phase, explore by default as for a recall
 * that names no phase), the same without the phase table, then every phase; with --sweep, the
 * neutral-phase ranking over RRF k, the relevance mix and the kNN floor, and the headline phase
 * with a smaller RRF k, without the constant priors, or with damped phase weights.
 */
function variants(): Variant[] {
  const phase = (flag('--phase') ?? 'explore') as UniversalPhase;
  if (!UNIVERSAL_PHASES.includes(phase)) throw new Error('--phase must be a universal phase');
  const rrfK = numberFlag('--rrf-k');
  const cosine = numberFlag('--cosine-mix');
  const base: RankingConfigOverrides = {
    ...(rrfK !== undefined && { rrfK }),
    ...(cosine !== undefined && { relevanceMix: { cosine, rrf: 1 - cosine } }),
  };
  const minKnn = numberFlag('--min-knn') ?? DEFAULT_MIN_KNN_SIMILARITY;
  const neutral = { ...base, phaseWeights: neutralPhaseWeights() };
  const list: Variant[] = [
    { name: 'fused', phase, overrides: base, minKnn },
    { name: 'fused-no-phase', phase, overrides: neutral, minKnn },
    ...UNIVERSAL_PHASES.map((p) => ({ name: `fused@${p}`, phase: p, overrides: base, minKnn })),
  ];
  if (!process.argv.includes('--sweep')) return list;
  const sweep = (name: string, overrides: RankingConfigOverrides, floor = minKnn): Variant => ({
    name: `no-phase ${name}`,
    phase,
    overrides: { ...neutral, ...overrides },
    minKnn: floor,
  });
  return [
    ...list,
    ...[5, 10, 20, 30, 100].map((k) => sweep(`rrfK=${k}`, { rrfK: k })),
    ...[0, 0.25, 0.75, 1].map((c) =>
      sweep(`cosine=${c}`, { relevanceMix: { cosine: c, rrf: 1 - c } }),
    ),
    ...[-1, 0.1, 0.3, 0.4].map((f) => sweep(`floor=${f}`, {}, f)),
    // The phase table kept, its effect or the constant priors it multiplies reduced.
    { name: `${phase} rrfK=20`, phase, overrides: { ...base, rrfK: 20 }, minKnn },
    {
      name: `${phase} relevance-only base`,
      phase,
      overrides: { ...base, hybrid: { relevance: 1, recency: 0, frequency: 0 } },
      minKnn,
    },
    ...[0.5, 0.25].map((e) => ({
      name: `${phase} weights^${e}`,
      phase,
      overrides: { ...base, phaseWeights: dampedWeights(e) },
      minKnn,
    })),
    {
      name: `${phase} weights^0.25 rrfK=20`,
      phase,
      overrides: { ...base, rrfK: 20, phaseWeights: dampedWeights(0.25) },
      minKnn,
    },
  ];
}

const round = (x: number) => Math.round(x * 1000) / 1000;
const roundScores = (s: Scores) => ({
  recall5: round(s.recall5),
  recall10: round(s.recall10),
  ndcg10: round(s.ndcg10),
});

type Ranked = Record<string, string[]>;

async function main(): Promise<void> {
  const fusedVariants = variants();
  const headline = fusedVariants[0];
  const started = performance.now();
  const entries = loadCorpus(process.cwd());
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  const queries = readQueries(flag('--queries') ?? QUERIES_FILE, byId);

  const dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-quality-'));
  const store = SqliteRetrievalStore.open({ dataDir: dir });
  try {
    const embedder = await createEmbedder();
    const indexStarted = performance.now();
    const indexer = new RetrievalIndexer(embedder, sqliteStoreWriter(store));
    await indexer.handleMemories(
      entries.map((entry) => delivered(memoryOf(entry), { key: entry.id })),
    );
    const indexMs = performance.now() - indexStarted;

    const cached = new CachingEmbedder(embedder, { maxEntries: 4096 });
    const recallStore: RecallStore = store;
    const services = fusedVariants.map(
      (variant) =>
        new RecallService(recallStore, cached, {
          config: rankingConfig(variant.overrides),
          clock: () => NOW,
          access: null, // a recall must not change the priors of the next query
          minKnnSimilarity: variant.minKnn,
        }),
    );

    const rankings: Ranked[] = [];
    const queryStarted = performance.now();
    for (const q of queries) {
      const [vector] = await cached.embed([q.query]);
      // The two lists RecallService fuses, from the same store call but without the kNN floor:
      // each list alone is a single-method baseline.
      const lists = await recallStore.candidates('memories', {
        text: q.query,
        vector: modelVector(cached.id, Array.from(vector)),
        scope: SCOPE,
        filter: memoryFilters({ stale: 'penalise' }, undefined),
        size: candidatesPerList(K),
      });
      const ranked: Ranked = {
        bm25: lists.bm25.map((hit) => hit.id),
        knn: (lists.knn ?? []).map((hit) => hit.id),
      };
      for (const [i, variant] of fusedVariants.entries()) {
        const answer = await services[i].recall({
          ...SCOPE,
          query: q.query,
          phase: variant.phase,
          k: K,
          tier: 'memories',
        });
        ranked[variant.name] = answer.results.map((hit) => hit.id);
      }
      rankings.push(ranked);
    }
    const queryMs = performance.now() - queryStarted;

    const methods = Object.keys(rankings[0] ?? {});
    const scores = queries.map((q, i) =>
      Object.fromEntries(
        methods.map((m) => [m, scoreRanking(rankings[i][m].slice(0, K), q.relevant)]),
      ),
    );
    const summary = (kind?: string) => {
      const rows = scores.filter((_, i) => kind === undefined || queries[i].kind === kind);
      const table = Object.fromEntries(
        methods.map((m) => [m, roundScores(meanScores(rows.map((row) => row[m])))]),
      );
      return { n: rows.length, table };
    };
    const overall = summary();
    const byKind = Object.fromEntries(KINDS.map((kind) => [kind, summary(kind)]));

    console.log(
      `retrieval quality: ${queries.length} queries, ${entries.length} documents ` +
        `(${entries.filter((e) => e.pkg === 'kafkajs').length} kafkajs, ` +
        `${entries.filter((e) => e.pkg === 'rxjs').length} rxjs), model ${embedder.id}; ` +
        `fused = RecallService, phase ${headline.phase}, ` +
        `rrfK ${rankingConfig(headline.overrides).rrfK}, kNN floor ${headline.minKnn}`,
    );
    printTable('all queries', overall);
    for (const kind of KINDS) printTable(`${kind} queries`, byKind[kind]);
    const beats = (m: string) =>
      scores.filter((row) => row[m].ndcg10 > row[headline.name].ndcg10).length;
    console.log(
      `\nqueries where a single list beats ${headline.name} on nDCG@10: ` +
        `bm25 ${beats('bm25')}, knn ${beats('knn')} (of ${queries.length})`,
    );

    if (process.argv.includes('--pool')) printPool(queries, rankings, byId);
    const serviceOf = (name: string) => services[fusedVariants.findIndex((v) => v.name === name)];
    const demo = await phaseDemo(serviceOf('fused'), serviceOf('fused-no-phase'));
    const top = overall.table;
    const beatsBoth = (method: string) =>
      (['recall5', 'recall10', 'ndcg10'] as const).every(
        (metric) => top[method][metric] > top.bm25[metric] && top[method][metric] > top.knn[metric],
      );
    // The fusion itself (no phase weights) is what must beat both lists; the headline row adds
    // the phase's type prior, which the topical labels cannot judge (README).
    const fusionBeatsBoth = beatsBoth('fused-no-phase');
    const fusedBeatsBoth = beatsBoth('fused');
    console.log(
      `\nthe fusion (no phase weights) beats both single lists on every metric: ${fusionBeatsBoth}`,
    );
    console.log(
      `fused in phase ${headline.phase} beats both single lists on every metric: ${fusedBeatsBoth}`,
    );
    console.log(
      JSON.stringify({
        queries: queries.length,
        documents: entries.length,
        model: embedder.id,
        headline: headline.name,
        phase: headline.phase,
        overall: overall.table,
        byKind: Object.fromEntries(KINDS.map((kind) => [kind, byKind[kind].table])),
        fusionBeatsBoth,
        fusedBeatsBoth,
        phaseDemo: demo,
        indexMs: Math.round(indexMs),
        queryMs: Math.round(queryMs),
        totalMs: Math.round(performance.now() - started),
      }),
    );
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Label maintenance (README): per query, the entries in the top 10 of BM25, kNN or the fused
 * ranking without phase weights that carry no label, for a person to judge.
 */
function printPool(
  queries: readonly LabelledQuery[],
  rankings: readonly Ranked[],
  byId: ReadonlyMap<string, CorpusEntry>,
): void {
  queries.forEach((q, i) => {
    const pooled = new Set(
      ['bm25', 'knn', 'fused-no-phase'].flatMap((m) => rankings[i][m].slice(0, K)),
    );
    const unlabelled = [...pooled].filter((id) => !(id in q.relevant));
    console.log(`\n${q.id} ${q.query}`);
    for (const id of unlabelled) console.log(`  ? ${id}  ${byId.get(id)?.content.slice(0, 110)}`);
  });
}

function printTable(title: string, { n, table }: { n: number; table: Record<string, Scores> }) {
  console.log(`\n${title} (n=${n})\n${'method'.padEnd(22)} recall@5  recall@10  nDCG@10`);
  for (const [m, s] of Object.entries(table)) {
    const cells = [s.recall5, s.recall10, s.ndcg10].map((x, i) =>
      x.toFixed(3).padStart([8, 10, 8][i]),
    );
    console.log(`${m.padEnd(22)} ${cells.join(' ')}`);
  }
}

/**
 * The same query without phase weights (the before), then in four phases (the after; native
 * "debugging" is refine): the top five, with their types and phase weights.
 */
async function phaseDemo(
  withPhases: RecallService,
  withoutPhases: RecallService,
): Promise<Record<string, string[]>> {
  console.log(`\nphase weighting, query "${DEMO_QUERY}" (top 5: type ×weight relevance final)`);
  const runs = [
    { label: 'no phase weights', service: withoutPhases, phase: 'explore' },
    ...(['explore', 'implement', 'validate', 'refine'] as const).map((phase) => ({
      label: phase,
      service: withPhases,
      phase,
    })),
  ];
  const orders: Record<string, string[]> = {};
  for (const { label, service, phase } of runs) {
    const answer = await service.recall({ ...SCOPE, query: DEMO_QUERY, phase, k: 5 });
    console.log(`  ${label}:`);
    for (const { score: s, text } of answer.results) {
      const weight = `×${s.phaseWeight.toFixed(1)}`;
      const scores = `${s.relevance.toFixed(3)} ${s.finalScore.toFixed(3)}`;
      console.log(
        `    ${String(s.memoryType).padEnd(14)} ${weight} ${scores}  ${text.slice(0, 80)}`,
      );
    }
    orders[label] = answer.results.map((hit) => `${hit.score.memoryType}:${hit.id}`);
  }
  return orders;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
