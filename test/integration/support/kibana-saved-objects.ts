import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// deploy/kibana/saved-objects.ndjson as test/integration/kibana-objects.test.ts reads it: the
// objects, each Vega visualisation's Elasticsearch request, and the fields a request names.
export const KIBANA_DIR = join(__dirname, '..', '..', '..', 'deploy', 'kibana');

export interface SavedObject {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  references: { name: string; type: string; id: string }[];
}
export interface VegaUrl {
  index: string;
  '%context%'?: boolean;
  '%timefield%'?: string;
  body: { size: number; aggs: Record<string, unknown> };
}
export interface VegaSpec {
  title: string;
  data: { url: VegaUrl; format: { property: string } };
}
export interface Bucket {
  key: string | number;
  doc_count: number;
  [sub: string]: unknown;
}
export type FieldMapping = { type?: string; index?: boolean };

export const OBJECTS = readFileSync(join(KIBANA_DIR, 'saved-objects.ndjson'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as SavedObject);
export const ofType = (type: string) => OBJECTS.filter((o) => o.type === type);
export const json = <T>(text: unknown) => JSON.parse(text as string) as T;

export function vegaSpec(object: SavedObject): VegaSpec {
  const visState = json<{ type: string; params: { spec: string } }>(object.attributes.visState);
  if (visState.type !== 'vega') {
    throw new Error(`${object.id} is a ${visState.type} visualisation, not vega`);
  }
  return json<VegaSpec>(visState.params.spec);
}
export const VISUALISATIONS = new Map(ofType('visualization').map((o) => [o.id, vegaSpec(o)]));

/** Every field path of a mapping (`a.b` for objects), with its type and `index` setting. */
export function flatten(
  properties: Record<string, unknown>,
  prefix = '',
): Map<string, FieldMapping> {
  const out = new Map<string, FieldMapping>();
  for (const [name, value] of Object.entries(properties)) {
    const field = value as FieldMapping & { properties?: Record<string, unknown> };
    if (field.properties) {
      for (const [path, inner] of flatten(field.properties, `${prefix}${name}.`)) {
        out.set(path, inner);
      }
    } else out.set(`${prefix}${name}`, field);
  }
  return out;
}

export const AGGREGATABLE = new Set([
  'keyword',
  'long',
  'integer',
  'float',
  'double',
  'date',
  'boolean',
]);

const QUERIES_BY_FIELD = new Set(['term', 'terms', 'range']);

/** Fields a request aggregates or filters on (must be indexed), and fields it only returns. */
export function fieldsOf(url: VegaUrl): { searched: string[]; returned: string[] } {
  const searched: string[] = url['%timefield%'] ? [url['%timefield%']] : [];
  const returned: string[] = [];
  const walk = (node: unknown, parent: string | null): void => {
    if (Array.isArray(node)) return node.forEach((item) => walk(item, parent));
    if (node === null || typeof node !== 'object') return;
    // A term, terms or range query is keyed by its field; the aggregations of those names are not.
    if (parent !== null && QUERIES_BY_FIELD.has(parent) && !('field' in node)) {
      searched.push(...Object.keys(node).filter((key) => key !== 'boost'));
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'field' && typeof value === 'string') searched.push(value);
      else if (key === '_source') returned.push(...(value as { includes: string[] }).includes);
      else walk(value, key);
    }
  };
  walk(url.body, null);
  return { searched, returned };
}
