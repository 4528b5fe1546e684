import type { Embedder } from '@engram/ai';
import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import {
  BulkWriter,
  createElasticsearchClient,
  elasticsearchStoreWriter,
  ensureRetrievalIndices,
  RETRIEVAL_INDEX_BASE_NAMES,
  MEMORY_ACCESS_INDEX_BASE_NAME,
  retrievalIndexNames,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RetrievalIndexer } from '../../apps/retrieval/src/retrieval-indexer';
import {
  delivered,
  episodeRecord,
  memoryRecord,
  promptRecord,
} from '../../apps/retrieval/src/testing/records';
import {
  AGGREGATABLE,
  fieldsOf,
  flatten,
  json,
  KIBANA_DIR,
  OBJECTS,
  ofType,
  VISUALISATIONS,
  type Bucket,
  type FieldMapping,
} from './support/kibana-saved-objects';
import { uniqueName } from './support/unique';

// deploy/kibana's saved objects against the real Elasticsearch: every field a data view or a
// visualisation names exists in the mappings the services create (made here by their own
// ensureRetrievalIndices), and every visualisation's request — extracted from the object as Kibana
// would run it — returns the buckets its chart draws, over documents the retrieval indexer itself
// wrote (its document builders, its bulk writer): a field renamed on either side fails here.
const DAY = 86_400_000;
const WEEK_START = Date.UTC(2026, 9, 5);
const DAYS = 7;

// ---- a replayed week: deterministic records of several sessions, through the indexer ----

const OUTCOMES = ['success', 'failure', 'partial', 'success', 'unknown'] as const;

function weekOfEpisodes(): Episode[] {
  const episodes: Episode[] = [];
  for (let d = 0; d < DAYS; d += 1) {
    for (let k = 0; k < 2 + (d % 3); k += 1) {
      const startedAt = WEEK_START + d * DAY + (9 + k) * 3_600_000;
      episodes.push(
        episodeRecord({
          episodeId: `e-${d}-${k}`,
          sessionId: `s-${d}-${k % 2}`,
          startedAt,
          endedAt: startedAt + 1_800_000,
          timestamp: startedAt + 1_800_000,
          outcome: OUTCOMES[(d + k) % OUTCOMES.length],
          failures: (d + k) % 4,
        }),
      );
    }
  }
  return episodes;
}

const sessions = (n: number) => Array.from({ length: n }, (_, i) => `s-${i}-0`);
const at = (d: number) => WEEK_START + d * DAY + 12 * 3_600_000;

const MEMORIES: Memory[] = [
  ['m-npm', 'error_pattern', 0.95, 0, 4, 'Bash: npm ERR! ERESOLVE <path>'],
  ['m-tsc', 'error_pattern', 0.75, 2, 2, 'Bash: tsc error TS2345 <path>'],
  ['m-jest', 'error_pattern', 0.55, 5, 1, 'Bash: jest timeout <n> ms'],
  ['m-gotcha-1', 'gotcha', 0.85, 1, 2, null],
  ['m-gotcha-2', 'gotcha', 0.65, 3, 3, null],
  ['m-dead-end', 'dead_end', 0.45, 4, 1, null],
  ['m-decision-1', 'decision', 0.95, 0, 1, null],
  ['m-decision-2', 'decision', 0.35, 6, 1, null],
  ['m-pattern', 'pattern', 0.75, 6, 2, null],
].map(([memoryId, memoryType, confidence, d, seen, citationText], i) =>
  memoryRecord({
    memoryId: memoryId as string,
    memoryType: memoryType as Memory['memoryType'],
    confidence: confidence as number,
    createdAt: at(d as number),
    timestamp: at(d as number),
    provenanceSessionIds: sessions(seen as number),
    citationText: citationText as string | null,
    // Two memories whose file changed since (SPEC §6 staleness).
    staleAt: i === 3 || i === 7 ? at(6) : null,
  }),
);
const PROMPTS: PromptSubmitted[] = [
  promptRecord({ eventId: 'p-1', promptId: 1, timestamp: at(0), text: 'fix the npm install' }),
  promptRecord({ eventId: 'p-2', promptId: 2, timestamp: at(1), source: 'agent' }),
];

/** Vectors are not what these tests look at: a fixed one per text keeps the indexer's path whole. */
const FIXED_EMBEDDER: Embedder = {
  id: 'fixed-test-vector',
  dims: 4,
  embed: (texts) => Promise.resolve(texts.map(() => new Float32Array([0.5, 0.5, 0.5, 0.5]))),
};

describe('deploy/kibana saved objects on the real Elasticsearch', () => {
  const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
  const indices: ElasticsearchIndexNames = retrievalIndexNames(`${uniqueName('it-kibana')}.`);
  const EPISODES = weekOfEpisodes();
  let mappings: Map<string, Map<string, FieldMapping>>;
  let counters: RetrievalIndexer['counters'];

  /** The services' index for a base name the objects use (they name no other index). */
  const indexFor = (base: string): string => {
    if (base === MEMORY_ACCESS_INDEX_BASE_NAME) return indices.memoryAccess;
    const tier = Object.entries(RETRIEVAL_INDEX_BASE_NAMES).find(([, name]) => name === base);
    if (!tier) throw new Error(`${base} is not an index the services create`);
    return indices[tier[0] as keyof typeof RETRIEVAL_INDEX_BASE_NAMES];
  };

  /** The visualisation's request as Kibana sends it: its dashboard context is the time range. */
  const runVisualisation = async (id: string, range = { from: WEEK_START, to: at(DAYS) }) => {
    const { url, format } = VISUALISATIONS.get(id)!.data;
    const timefield = url['%timefield%'];
    const filter = timefield
      ? [{ range: { [timefield]: { gte: range.from, lte: range.to, format: 'epoch_millis' } } }]
      : [];
    const response = await client.search({
      index: indexFor(url.index),
      ...url.body,
      ...(url['%context%'] && { query: { bool: { must: [], filter } } }),
    });
    const buckets = format.property
      .split('.')
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], response);
    return buckets as Bucket[];
  };

  beforeAll(async () => {
    await ensureRetrievalIndices(client, indices, { dims: FIXED_EMBEDDER.dims });
    const indexer = new RetrievalIndexer(
      FIXED_EMBEDDER,
      elasticsearchStoreWriter(BulkWriter.forClient(client), indices),
    );
    await indexer.handleMemories(MEMORIES.map((m) => delivered(m)));
    await indexer.handleEpisodes(EPISODES.map((e) => delivered(e)));
    await indexer.handlePrompts(PROMPTS.map((p) => delivered(p)));
    counters = indexer.counters;
    await client.indices.refresh({ index: Object.values(indices) });
    const response = await client.indices.getMapping({ index: Object.values(indices) });
    mappings = new Map(
      Object.entries(response).map(([index, { mappings: m }]) => [
        index,
        flatten(m.properties ?? {}),
      ]),
    );
  });
  afterAll(async () => {
    await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
    for (const name of Object.values(indices)) {
      await client.indices.deleteIndexTemplate({ name }, { ignore: [404] });
    }
    await client.close();
  });

  it("should run on the retrieval indexer's own documents (agent prompts are no turns)", () => {
    expect(counters).toMatchObject({ indexed: MEMORIES.length + EPISODES.length + 1, skipped: 1 });
  });

  it('should be what deploy/kibana/build-saved-objects.mjs writes', () => {
    expect(() =>
      execFileSync(process.execPath, [join(KIBANA_DIR, 'build-saved-objects.mjs'), '--check']),
    ).not.toThrow();
  });

  it('should have a data view per index the services create, naming only mapped fields', () => {
    const views = ofType('index-pattern');
    expect(views.map((v) => indexFor(v.attributes.title as string)).sort()).toEqual(
      Object.values(indices).sort(),
    );
    const problems = views.map((view) => {
      const fields = mappings.get(indexFor(view.attributes.title as string))!;
      const timeField = view.attributes.timeFieldName as string;
      const named = [
        timeField,
        ...Object.keys(json<object>(view.attributes.fieldAttrs)),
        ...Object.keys(json<object>(view.attributes.fieldFormatMap)),
        ...json<{ value: string }[]>(view.attributes.sourceFilters).map((f) => f.value),
      ];
      return {
        view: view.id,
        unmapped: named.filter((f) => !fields.has(f)),
        timeFieldType: fields.get(timeField)?.type,
      };
    });
    expect(problems).toEqual(
      views.map((view) => ({ view: view.id, unmapped: [], timeFieldType: 'date' })),
    );
  });

  it('should aggregate and filter only on indexed, aggregatable fields of the index it reads', () => {
    expect(VISUALISATIONS.size).toBe(8);
    const checked = [...VISUALISATIONS].map(([id, { data }]) => {
      const fields = mappings.get(indexFor(data.url.index))!;
      const { searched, returned } = fieldsOf(data.url);
      const unusable = searched.filter((f) => {
        const mapping = fields.get(f);
        return !mapping || !AGGREGATABLE.has(mapping.type ?? '') || mapping.index === false;
      });
      const unmapped = returned.filter((f) => !fields.has(f));
      return { id, searchesSomething: searched.length > 0, unusable, unmapped };
    });
    expect(checked).toEqual(
      [...VISUALISATIONS.keys()].map((id) => ({
        id,
        searchesSomething: true,
        unusable: [],
        unmapped: [],
      })),
    );
  });

  it('should put every visualisation on a dashboard, and reference only objects of the file', () => {
    const ids = new Set(OBJECTS.map((o) => `${o.type}/${o.id}`));
    const dashboards = ofType('dashboard');
    expect(dashboards.map((d) => d.attributes.title)).toEqual([
      'Engram: memory health',
      'Engram: episodes',
      'Engram: top error patterns',
      'Engram: friction over time',
    ]);
    const onDashboards = dashboards.flatMap((d) => {
      const panels = json<{ panelRefName: string }[]>(d.attributes.panelsJSON);
      expect(panels.map((p) => p.panelRefName)).toEqual(d.references.map((r) => r.name));
      return d.references.map((r) => `${r.type}/${r.id}`);
    });
    expect(onDashboards.filter((ref) => !ids.has(ref))).toEqual([]);
    expect(new Set(onDashboards)).toEqual(
      new Set([...VISUALISATIONS.keys()].map((id) => `visualization/${id}`)),
    );
  });

  it('every visualisation: its request runs and returns non-empty buckets', async () => {
    const ids = [...VISUALISATIONS.keys()];
    const filled: Record<string, number> = {};
    for (const id of ids) {
      filled[id] = (await runVisualisation(id)).filter((b) => b.doc_count > 0).length;
    }
    expect(ids.filter((id) => filled[id] === 0)).toEqual([]);
    expect(Object.keys(filled)).toHaveLength(8);
  });

  it('memory health: counts by type, the stale share and the confidence tenths', async () => {
    const byType = await runVisualisation('engram-memories-by-type');
    const counts: Record<string, number> = {};
    for (const m of MEMORIES) counts[m.memoryType] = (counts[m.memoryType] ?? 0) + 1;
    expect(Object.fromEntries(byType.map((b) => [b.key, b.doc_count]))).toEqual(counts);

    const stale = await runVisualisation('engram-memories-stale-share');
    expect(Object.fromEntries(stale.map((b) => [b.key, b.doc_count]))).toEqual({
      stale: 2,
      current: MEMORIES.length - 2,
    });

    const tenths = await runVisualisation('engram-memories-confidence');
    const expected: Record<string, number> = {};
    for (const m of MEMORIES) {
      const tenth = (Math.floor(m.confidence * 10) / 10).toFixed(1);
      expected[tenth] = (expected[tenth] ?? 0) + 1;
    }
    const seen = tenths.filter((b) => b.doc_count > 0);
    expect(Object.fromEntries(seen.map((b) => [Number(b.key).toFixed(1), b.doc_count]))).toEqual(
      expected,
    );
  });

  it('episodes: per day by outcome, within the dashboard time range', async () => {
    const days = await runVisualisation('engram-episodes-per-day');
    expect(days.map((b) => b.key)).toEqual(
      Array.from({ length: DAYS }, (_, d) => WEEK_START + d * DAY),
    );
    const cells = days.flatMap((b) =>
      (b.split as { buckets: Bucket[] }).buckets.map((o) => `${b.key}/${o.key}/${o.doc_count}`),
    );
    const expected = new Map<string, number>();
    for (const e of EPISODES) {
      const key = `${Math.floor(e.startedAt / DAY) * DAY}/${e.outcome}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    expect(cells.sort()).toEqual([...expected].map(([k, n]) => `${k}/${n}`).sort());
    // The time picker narrows it: three days, three buckets.
    const narrowed = await runVisualisation('engram-episodes-per-day', {
      from: WEEK_START + 2 * DAY,
      to: WEEK_START + 5 * DAY - 1,
    });
    expect(narrowed).toHaveLength(3);

    const outcomes = await runVisualisation('engram-episodes-outcomes');
    const total = outcomes.reduce((sum, b) => sum + b.doc_count, 0);
    expect(total).toBe(EPISODES.length);
    expect(outcomes.find((b) => b.key === 'failure')?.doc_count).toBe(
      EPISODES.filter((e) => e.outcome === 'failure').length,
    );
  });

  it('top error patterns: error_pattern memories by sessions seen, with their text', async () => {
    const patterns = await runVisualisation('engram-top-error-patterns');
    expect(
      patterns.map((b) => [
        b.key,
        (b.sessions as { value: number }).value,
        (b.about as { hits: { hits: { _source: { citationText: string } }[] } }).hits.hits[0]
          ._source.citationText,
      ]),
    ).toEqual([
      ['m-npm', 4, 'Bash: npm ERR! ERESOLVE <path>'],
      ['m-tsc', 2, 'Bash: tsc error TS2345 <path>'],
      ['m-jest', 1, 'Bash: jest timeout <n> ms'],
    ]);
  });

  it('friction over time: failures per day, and new friction memories per day', async () => {
    const days = await runVisualisation('engram-friction-failures-per-day');
    const episodesOfDay = (day: number) =>
      EPISODES.filter((e) => Math.floor(e.startedAt / DAY) * DAY === day);
    expect(
      days.map((b) => [
        (b.failedToolCalls as { value: number }).value,
        (b.unsuccessful as { doc_count: number }).doc_count,
      ]),
    ).toEqual(
      days.map((b) => {
        const ofDay = episodesOfDay(Number(b.key));
        return [
          ofDay.reduce((sum, e) => sum + e.failures, 0),
          ofDay.filter((e) => e.outcome === 'failure' || e.outcome === 'partial').length,
        ];
      }),
    );
    const memories = await runVisualisation('engram-friction-memories-per-day');
    const perType = memories.flatMap((b) => (b.split as { buckets: Bucket[] }).buckets);
    expect(perType.reduce((sum, b) => sum + b.doc_count, 0)).toBe(
      MEMORIES.filter((m) => ['error_pattern', 'gotcha', 'dead_end'].includes(m.memoryType)).length,
    );
  });
});
