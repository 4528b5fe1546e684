// Writes deploy/kibana/saved-objects.ndjson (Kibana 8 saved-objects import format) from the data
// views below and the visualisations and dashboards of visualisations.mjs: edit those, then run
// `node deploy/kibana/build-saved-objects.mjs`. `--check` exits 1 when the committed file is not
// what this script writes (test/integration/kibana-objects.test.ts runs the same comparison).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DASHBOARDS, VISUALISATIONS } from './visualisations.mjs';

export const OBJECTS_FILE = join(dirname(fileURLToPath(import.meta.url)), 'saved-objects.ndjson');

const EMPTY_SEARCH = JSON.stringify({ query: { query: '', language: 'kuery' }, filter: [] });

/**
 * Data views, one per index the services create. No field list: Kibana reads the mapping. What is
 * stored names fields — the time field, labels (fieldAttrs), formats and the source filter that
 * keeps the packed embedding out of Discover — and the integration test checks each against the
 * mapping.
 */
const DATA_VIEWS = {
  'engram-memories': {
    name: 'Engram memories',
    timeFieldName: 'createdAt',
    labels: {
      memoryType: 'Memory type',
      confidence: 'Confidence',
      staleAt: 'Stale since',
      needsReview: 'Needs review',
      accessCount: 'Times recalled',
      provenanceSessionIds: 'Seen in sessions',
    },
    formats: { confidence: { id: 'percent' } },
    hidden: ['embeddingPacked'],
  },
  'engram-episodes': {
    name: 'Engram episodes',
    timeFieldName: 'startedAt',
    labels: { outcome: 'Outcome', failures: 'Failed tool calls', durationMs: 'Duration' },
    formats: {
      durationMs: {
        id: 'duration',
        params: { inputFormat: 'milliseconds', outputFormat: 'humanize' },
      },
    },
    hidden: ['embeddingPacked'],
  },
  'engram-turns': {
    name: 'Engram turns (user prompts)',
    timeFieldName: 'timestamp',
    labels: { text: 'Prompt (redacted)' },
    formats: {},
    hidden: ['embeddingPacked'],
  },
  'engram-memory-access': {
    name: 'Engram memory access counters',
    timeFieldName: 'lastAccessedAt',
    labels: { accessCount: 'Times recalled' },
    formats: {},
    hidden: [],
  },
};

function dataView(title, view) {
  return {
    type: 'index-pattern',
    id: title,
    attributes: {
      title,
      name: view.name,
      timeFieldName: view.timeFieldName,
      fieldAttrs: JSON.stringify(
        Object.fromEntries(
          Object.entries(view.labels).map(([f, label]) => [f, { customLabel: label }]),
        ),
      ),
      fieldFormatMap: JSON.stringify(view.formats),
      sourceFilters: JSON.stringify(view.hidden.map((value) => ({ value }))),
      allowNoIndex: true,
    },
    references: [],
  };
}

function visualisation(id, { spec, description }) {
  return {
    type: 'visualization',
    id,
    attributes: {
      title: spec.title,
      description,
      visState: JSON.stringify({
        title: spec.title,
        type: 'vega',
        aggs: [],
        params: { spec: JSON.stringify(spec, null, 2) },
      }),
      uiStateJSON: '{}',
      version: 1,
      kibanaSavedObjectMeta: { searchSourceJSON: EMPTY_SEARCH },
    },
    references: [],
  };
}

const PANEL_WIDTH = 24; // of Kibana's 48 grid columns: two panels a row
const PANEL_HEIGHT = 15;

function dashboard(id, { title, description, panels }) {
  const panelsJSON = panels.map((_, i) => ({
    panelIndex: String(i + 1),
    gridData: {
      x: (i % 2) * PANEL_WIDTH,
      y: Math.floor(i / 2) * PANEL_HEIGHT,
      w: panels.length === 1 ? 2 * PANEL_WIDTH : PANEL_WIDTH,
      h: PANEL_HEIGHT,
      i: String(i + 1),
    },
    embeddableConfig: {},
    panelRefName: `panel_${i}`,
  }));
  return {
    type: 'dashboard',
    id,
    attributes: {
      title,
      description,
      panelsJSON: JSON.stringify(panelsJSON),
      optionsJSON: JSON.stringify({ useMargins: true, syncColors: false, hidePanelTitles: false }),
      timeRestore: true,
      timeFrom: 'now-30d',
      timeTo: 'now',
      refreshInterval: { pause: true, value: 0 },
      version: 1,
      kibanaSavedObjectMeta: { searchSourceJSON: EMPTY_SEARCH },
    },
    references: panels.map((panel, i) => ({
      name: `panel_${i}`,
      type: 'visualization',
      id: panel,
    })),
  };
}

export function savedObjects() {
  return [
    ...Object.entries(DATA_VIEWS).map(([title, view]) => dataView(title, view)),
    ...Object.entries(VISUALISATIONS).map(([id, vis]) => visualisation(id, vis)),
    ...Object.entries(DASHBOARDS).map(([id, board]) => dashboard(id, board)),
  ];
}

export function savedObjectsNdjson() {
  return `${savedObjects()
    .map((object) => JSON.stringify(object))
    .join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const wanted = savedObjectsNdjson();
  if (process.argv.includes('--check')) {
    const current = readFileSync(OBJECTS_FILE, 'utf8');
    if (current !== wanted) {
      console.error(
        `${OBJECTS_FILE} is out of date: run node deploy/kibana/build-saved-objects.mjs`,
      );
      process.exit(1);
    }
  } else {
    writeFileSync(OBJECTS_FILE, wanted);
    console.log(`wrote ${OBJECTS_FILE}`);
  }
}
