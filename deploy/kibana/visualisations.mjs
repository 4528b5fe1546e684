// The dashboards' visualisations, as Vega-Lite specs whose Elasticsearch request is written out in
// the spec (`data.url`): Kibana runs exactly that request (adding the dashboard's query, filters
// and, with `%timefield%`, its time range where `%context%` stands), and
// test/integration/kibana-objects.test.ts extracts it and runs it on the real Elasticsearch.
// Lens and TSVB keep their queries in Kibana's own formats, which only Kibana can run.
//
// Index names are the services' base names (libs/elasticsearch retrieval-indices.ts);
// `npm run kibana:import` puts ENGRAM_TOPIC_PREFIX in front of them.

const VEGA_LITE = 'https://vega.github.io/schema/vega-lite/v5.json';

/** The friction a memory records: an error that came back, an edit that needed fixing, a dead end. */
export const FRICTION_MEMORY_TYPES = ['error_pattern', 'gotcha', 'dead_end'];
/** Episode outcomes that mean the work did not (fully) succeed (contracts EPISODE_OUTCOMES). */
export const UNSUCCESSFUL_OUTCOMES = ['failure', 'partial'];

/** `data` of a spec: one Elasticsearch request and where its buckets are in the response. */
function esData(index, aggs, bucketsAt, timefield) {
  return {
    url: {
      index,
      '%context%': true,
      ...(timefield ? { '%timefield%': timefield } : {}),
      body: { size: 0, aggs },
    },
    format: { property: bucketsAt },
  };
}

function spec(title, data, rest) {
  return {
    $schema: VEGA_LITE,
    title,
    autosize: { type: 'fit', contains: 'padding' },
    data,
    ...rest,
  };
}

const count = { field: 'doc_count', type: 'quantitative', title: 'count' };

/** A donut of buckets (`key`, `doc_count`), with `extra` tooltip fields. */
function donut(label, extra = []) {
  return {
    mark: { type: 'arc', innerRadius: 40 },
    encoding: {
      theta: { field: 'doc_count', type: 'quantitative' },
      color: { field: 'key', type: 'nominal', title: label },
      tooltip: [{ field: 'key', title: label }, count, ...extra],
    },
  };
}
const day = { field: 'key', type: 'temporal', timeUnit: 'yearmonthdate', title: 'day' };

/**
 * Documents per day of `timefield` split by the terms of `field` (a stacked bar): a terms
 * aggregation `split` in a daily date histogram `days`, inside a filter aggregation when a
 * `filter` is given.
 */
function stackedPerDay(title, { index, timefield, field, label, filter }) {
  const days = {
    date_histogram: { field: timefield, calendar_interval: '1d' },
    aggs: { split: { terms: { field, size: 10 } } },
  };
  const aggs = filter ? { only: { filter, aggs: { days } } } : { days };
  const bucketsAt = filter ? 'aggregations.only.days.buckets' : 'aggregations.days.buckets';
  return spec(title, esData(index, aggs, bucketsAt, timefield), {
    transform: [
      { flatten: ['split.buckets'], as: ['part'] },
      { calculate: 'datum.part.key', as: 'group' },
      { calculate: 'datum.part.doc_count', as: 'documents' },
    ],
    mark: 'bar',
    encoding: {
      x: day,
      y: { field: 'documents', type: 'quantitative', stack: true, title: 'count' },
      color: { field: 'group', type: 'nominal', title: label },
    },
  });
}

const memoriesByType = spec(
  'Memories by type',
  esData(
    'engram-memories',
    { types: { terms: { field: 'memoryType', size: 30 } } },
    'aggregations.types.buckets',
  ),
  {
    mark: 'bar',
    encoding: {
      y: { field: 'key', type: 'nominal', sort: '-x', title: 'type' },
      x: count,
      tooltip: [{ field: 'key', title: 'type' }, count],
    },
  },
);

const staleShare = spec(
  'Stale share',
  esData(
    'engram-memories',
    {
      state: {
        filters: {
          keyed: false,
          filters: {
            stale: { exists: { field: 'staleAt' } },
            current: { bool: { must_not: { exists: { field: 'staleAt' } } } },
          },
        },
      },
    },
    'aggregations.state.buckets',
  ),
  {
    transform: [
      { joinaggregate: [{ op: 'sum', field: 'doc_count', as: 'total' }] },
      { calculate: 'datum.total > 0 ? datum.doc_count / datum.total : 0', as: 'share' },
    ],
    ...donut('memories', [{ field: 'share', type: 'quantitative', format: '.1%' }]),
  },
);

const confidence = spec(
  'Confidence distribution',
  esData(
    'engram-memories',
    {
      confidence: {
        histogram: { field: 'confidence', interval: 0.1, extended_bounds: { min: 0, max: 0.9 } },
      },
    },
    'aggregations.confidence.buckets',
  ),
  {
    mark: 'bar',
    encoding: {
      x: { field: 'key', type: 'ordinal', title: 'confidence (from)', axis: { format: '.1f' } },
      y: count,
    },
  },
);

const episodesPerDay = stackedPerDay('Episodes per day, by outcome', {
  index: 'engram-episodes',
  timefield: 'startedAt',
  field: 'outcome',
  label: 'outcome',
});

const episodeOutcomes = spec(
  'Episode outcomes',
  esData(
    'engram-episodes',
    { outcomes: { terms: { field: 'outcome', size: 10 } } },
    'aggregations.outcomes.buckets',
    'startedAt',
  ),
  donut('outcome'),
);

const topErrorPatterns = spec(
  'Top error patterns (by sessions seen)',
  esData(
    'engram-memories',
    {
      errors: {
        filter: { term: { memoryType: 'error_pattern' } },
        aggs: {
          patterns: {
            terms: {
              field: 'memoryId',
              size: 15,
              order: [{ sessions: 'desc' }, { _key: 'asc' }],
            },
            aggs: {
              sessions: { value_count: { field: 'provenanceSessionIds' } },
              about: {
                top_hits: {
                  size: 1,
                  _source: { includes: ['citationText', 'relatedFiles', 'source', 'staleAt'] },
                },
              },
            },
          },
        },
      },
    },
    'aggregations.errors.patterns.buckets',
  ),
  {
    transform: [
      { calculate: 'datum.about.hits.hits[0]._source.citationText || datum.key', as: 'pattern' },
      { calculate: 'datum.sessions.value', as: 'sessionCount' },
    ],
    mark: 'bar',
    encoding: {
      y: { field: 'pattern', type: 'nominal', sort: '-x', title: null },
      x: { field: 'sessionCount', type: 'quantitative', title: 'sessions' },
      tooltip: [
        { field: 'pattern', title: 'error' },
        { field: 'sessionCount', title: 'sessions' },
        { field: 'key', title: 'memoryId' },
      ],
    },
  },
);

const frictionPerDay = spec(
  'Failures per day (episodes)',
  esData(
    'engram-episodes',
    {
      days: {
        date_histogram: { field: 'startedAt', calendar_interval: '1d' },
        aggs: {
          failedToolCalls: { sum: { field: 'failures' } },
          unsuccessful: { filter: { terms: { outcome: UNSUCCESSFUL_OUTCOMES } } },
        },
      },
    },
    'aggregations.days.buckets',
    'startedAt',
  ),
  {
    transform: [
      { calculate: 'datum.failedToolCalls.value', as: 'failed tool calls' },
      { calculate: 'datum.unsuccessful.doc_count', as: 'failed or partial episodes' },
      { fold: ['failed tool calls', 'failed or partial episodes'], as: ['series', 'value'] },
    ],
    mark: { type: 'line', point: true },
    encoding: {
      x: day,
      y: { field: 'value', type: 'quantitative', title: null },
      color: { field: 'series', type: 'nominal', title: null },
    },
  },
);

const frictionMemoriesPerDay = stackedPerDay(
  'Friction memories per day (error patterns, gotchas, dead ends)',
  {
    index: 'engram-memories',
    timefield: 'createdAt',
    field: 'memoryType',
    label: 'type',
    filter: { terms: { memoryType: FRICTION_MEMORY_TYPES } },
  },
);

/** id → { title, description, spec }; ids are stable: re-importing overwrites. */
export const VISUALISATIONS = {
  'engram-memories-by-type': {
    spec: memoriesByType,
    description: 'Every memory in the store by memoryType (the time picker does not apply).',
  },
  'engram-memories-stale-share': {
    spec: staleShare,
    description: 'Memories with staleAt set (a related file changed since) against current ones.',
  },
  'engram-memories-confidence': {
    spec: confidence,
    description: 'How many memories have a confidence in each tenth of 0..1.',
  },
  'engram-episodes-per-day': {
    spec: episodesPerDay,
    description: 'Episodes started per UTC day, stacked by outcome.',
  },
  'engram-episodes-outcomes': {
    spec: episodeOutcomes,
    description: 'Episodes in the time range by outcome.',
  },
  'engram-top-error-patterns': {
    spec: topErrorPatterns,
    description:
      'error_pattern memories (observer: the same error 3+ times; QA failures) ranked by the sessions they were seen in.',
  },
  'engram-friction-failures-per-day': {
    spec: frictionPerDay,
    description: 'Failed tool calls and failed or partial episodes per day, from the episodes.',
  },
  'engram-friction-memories-per-day': {
    spec: frictionMemoriesPerDay,
    description: 'New friction memories (error_pattern, gotcha, dead_end) per day of creation.',
  },
};

/** Dashboards: id → title, description, panels (visualisation ids, laid out two per row). */
export const DASHBOARDS = {
  'engram-dashboard-memory-health': {
    title: 'Engram: memory health',
    description: 'What the memory store holds: counts by type, the stale share, confidence.',
    panels: [
      'engram-memories-by-type',
      'engram-memories-stale-share',
      'engram-memories-confidence',
    ],
  },
  'engram-dashboard-episodes': {
    title: 'Engram: episodes',
    description: 'Episodes per day and how they ended.',
    panels: ['engram-episodes-per-day', 'engram-episodes-outcomes'],
  },
  'engram-dashboard-error-patterns': {
    title: 'Engram: top error patterns',
    description: 'The recurring errors the observer turned into error_pattern memories.',
    panels: ['engram-top-error-patterns'],
  },
  'engram-dashboard-friction': {
    title: 'Engram: friction over time',
    description:
      'Failures per day from the episodes, and new friction memories per day. The friction report proposals (engram friction-report) are not in Elasticsearch: see deploy/kibana/README.md.',
    panels: ['engram-friction-failures-per-day', 'engram-friction-memories-per-day'],
  },
};
