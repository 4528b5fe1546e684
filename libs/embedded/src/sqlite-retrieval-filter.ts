import { MisconfigurationError, type RecallScope, type StoreFilter } from '@engram/core';

// The port's store filters compiled to SQL over the stored documents (embedded mode).

type SqlValue = string | number | null;

export interface CompiledFilter {
  /** A boolean SQL expression over the row alias `d`. */
  sql: string;
  params: SqlValue[];
  /** The scope every query carries (SPEC §11). */
  scope: RecallScope;
  /** True when the filter says nothing beyond tenant and project. */
  scopeOnly: boolean;
}

/** A filter the embedded store does not translate: a bug to fix, never a silent "any". */
export class UnsupportedFilterError extends MisconfigurationError {}

interface Sql {
  sql: string;
  params: SqlValue[];
}

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The JSON path of a document field (the port's field names, nested ones dotted:
 * `workUnitRef.hierarchy`; checked all the same).
 */
function jsonPath(field: string): string {
  if (!FIELD.test(field)) throw new UnsupportedFilterError(`filter field "${field}" is not a name`);
  return `$.${field}`;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * `term`/`terms` as the port means them: any value of the field (scalar or array) is one of the
 * given ones. An empty list matches nothing.
 */
function termsSql(field: string, values: readonly string[]): Sql {
  if (values.length === 0) return { sql: '0', params: [] };
  return {
    sql: `EXISTS (SELECT 1 FROM json_each(d.doc, ?) WHERE value IN (${placeholders(values.length)}))`,
    params: [jsonPath(field), ...values],
  };
}

/** Numeric ranges (epoch millis, confidence) on any value of the field, bounds inclusive. */
function rangeSql(field: string, gte: number | undefined, lte: number | undefined): Sql {
  const tests: string[] = [];
  const params: SqlValue[] = [jsonPath(field)];
  for (const [operator, bound] of [
    ['>=', gte],
    ['<=', lte],
  ] as const) {
    if (bound === undefined) continue;
    if (typeof bound !== 'number') {
      throw new UnsupportedFilterError(`range ${operator} ${JSON.stringify(bound)} on ${field}`);
    }
    tests.push(` AND value ${operator} ?`);
    params.push(bound);
  }
  return {
    sql: `EXISTS (SELECT 1 FROM json_each(d.doc, ?) WHERE type IN ('integer', 'real')${tests.join('')})`,
    params,
  };
}

/** A field without a value: missing, null or an empty array. */
function missingSql(field: string): Sql {
  return {
    sql: `NOT EXISTS (SELECT 1 FROM json_each(d.doc, ?) WHERE type <> 'null')`,
    params: [jsonPath(field)],
  };
}

/**
 * A boolean field (JSON true reads as 1); missing or null counts as false. The path is written
 * into the SQL (a checked name): `json_extract(doc, '$.needsReview') = 1` is the predicate of the
 * review queue's partial index, which SQLite uses only for that very expression.
 */
function flagSql(field: string, value: boolean): Sql {
  const extract = `json_extract(d.doc, '${jsonPath(field)}')`;
  return { sql: value ? `${extract} = 1` : `COALESCE(${extract}, 0) <> 1`, params: [] };
}

function joined(parts: readonly Sql[], operator: 'AND' | 'OR', empty: '1' | '0'): Sql {
  if (parts.length === 0) return { sql: empty, params: [] };
  return {
    sql: parts.map((p) => `(${p.sql})`).join(` ${operator} `),
    params: parts.flatMap((p) => p.params),
  };
}

function filterSql(filter: StoreFilter): Sql {
  switch (filter.kind) {
    case 'term':
      return termsSql(filter.field, [filter.value]);
    case 'terms':
      return termsSql(filter.field, filter.values);
    case 'range':
      return rangeSql(filter.field, filter.gte, filter.lte);
    case 'missing':
      return missingSql(filter.field);
    case 'flag':
      return flagSql(filter.field, filter.value);
    case 'all':
      return joined(filter.filters.map(filterSql), 'AND', '1');
    case 'any':
      return joined(filter.filters.map(filterSql), 'OR', '0');
    default:
      throw new UnsupportedFilterError(
        `filter ${JSON.stringify(filter)} is not supported embedded`,
      );
  }
}

/**
 * A store query's scope and filters (the port's StoreFilter) as one parameterised SQL condition
 * over the stored documents: the same semantics over the same fields as Elasticsearch's query
 * DSL, so both stores pass one contract suite. The scope is required.
 */
export function compileFilter(scope: RecallScope, filters: readonly StoreFilter[]): CompiledFilter {
  if (!scope.tenantId || !scope.projectId) {
    throw new UnsupportedFilterError('a retrieval query must filter on tenantId and projectId');
  }
  const compiled = joined(
    [
      { sql: 'd.tenant_id = ?', params: [scope.tenantId] },
      { sql: 'd.project_id = ?', params: [scope.projectId] },
      ...filters.map(filterSql),
    ],
    'AND',
    '1',
  );
  return {
    ...compiled,
    scope: { tenantId: scope.tenantId, projectId: scope.projectId },
    scopeOnly: filters.length === 0,
  };
}
