import {
  isNamedDefinition,
  isPrimitiveName,
  type AvroComplexJson,
  type AvroSchemaJson,
  type SchemaIndex,
} from './schema-index';

/** A value that does not fit the schema; `path` names the field (`workUnitRef.hierarchy[1]`). */
export class CoercionError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = 'CoercionError';
  }
}

export interface CoercionOptions {
  /** Fields a record does not declare: an error (default), or dropped. */
  unknownFields?: 'reject' | 'ignore';
}

interface Context extends CoercionOptions {
  index: SchemaIndex;
}

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
// A date-time with a zone designator: an ISO string without one would be read in local time.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Plain JSON (as written in replay files) → the value avsc encodes for `schema`: missing fields take
 * their defaults, nullable fields accept null or the value, `timestamp-millis` accepts epoch millis
 * or an ISO 8601 date-time. Throws CoercionError naming the first offending field.
 */
export function coerceRecordFields(
  index: SchemaIndex,
  record: AvroComplexJson,
  value: Record<string, unknown>,
  options: CoercionOptions = {},
): Record<string, unknown> {
  return coerceRecord(record, value, '', index.namespaceOf(record), { ...options, index });
}

function coerce(
  schema: AvroSchemaJson,
  value: unknown,
  path: string,
  ns: string | undefined,
  ctx: Context,
): unknown {
  if (Array.isArray(schema)) return coerceUnion(schema, value, path, ns, ctx);
  if (typeof schema === 'string') {
    if (isPrimitiveName(schema)) return coercePrimitive(schema, undefined, value, path);
    const found = ctx.index.lookup(schema, ns);
    if (!found) throw new CoercionError(path, `unknown Avro type ${schema}`);
    return coerce(found.def, value, path, found.namespace, ctx);
  }
  if (isNamedDefinition(schema)) {
    if (schema.type === 'enum') return coerceEnum(schema.symbols ?? [], value, path);
    if (schema.type === 'fixed') throw new CoercionError(path, 'fixed values cannot be replayed');
    return coerceRecord(schema, value, path, ctx.index.namespaceOf(schema, ns), ctx);
  }
  if (typeof schema.type !== 'string') return coerce(schema.type, value, path, ns, ctx);
  if (schema.type === 'array') {
    if (!Array.isArray(value)) throw mismatch(path, 'an array', value);
    return value.map((item, i) => coerce(schema.items!, item, `${path}[${i}]`, ns, ctx));
  }
  if (schema.type === 'map') {
    if (!isPlainObject(value)) throw mismatch(path, 'an object (map)', value);
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        coerce(schema.values!, v, `${path}.${k}`, ns, ctx),
      ]),
    );
  }
  return coercePrimitive(schema.type, schema.logicalType, value, path);
}

function coerceRecord(
  record: AvroComplexJson,
  value: unknown,
  path: string,
  ns: string | undefined,
  ctx: Context,
): Record<string, unknown> {
  if (!isPlainObject(value)) throw mismatch(path, `a ${record.name} object`, value);
  const fields = record.fields ?? [];
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const fieldPath = path ? `${path}.${field.name}` : field.name;
    const given = value[field.name];
    if (given !== undefined) {
      out[field.name] = coerce(field.type, given, fieldPath, ns, ctx);
    } else if ('default' in field) {
      out[field.name] = structuredClone(field.default);
    } else {
      throw new CoercionError(fieldPath, 'missing required field');
    }
  }
  if (ctx.unknownFields !== 'ignore') {
    const known = new Set(fields.map((f) => f.name));
    const extra = Object.keys(value).find((key) => !known.has(key));
    if (extra !== undefined) {
      throw new CoercionError(path ? `${path}.${extra}` : extra, `unknown field of ${record.name}`);
    }
  }
  return out;
}

function coerceUnion(
  branches: AvroSchemaJson[],
  value: unknown,
  path: string,
  ns: string | undefined,
  ctx: Context,
): unknown {
  if (value === null) {
    if (branches.includes('null')) return null;
    throw new CoercionError(path, 'must not be null');
  }
  const candidates = branches.filter((branch) => branch !== 'null');
  if (candidates.length === 1) return coerce(candidates[0], value, path, ns, ctx);
  for (const branch of candidates) {
    try {
      return coerce(branch, value, path, ns, ctx);
    } catch (error) {
      if (!(error instanceof CoercionError)) throw error;
    }
  }
  throw mismatch(path, 'a value of one of the union branches', value);
}

function coerceEnum(symbols: string[], value: unknown, path: string): string {
  if (typeof value === 'string' && symbols.includes(value)) return value;
  throw mismatch(path, `one of ${symbols.join(' | ')}`, value);
}

function coercePrimitive(
  type: string,
  logicalType: string | undefined,
  value: unknown,
  path: string,
): unknown {
  switch (type) {
    case 'null':
      if (value === null) return null;
      throw mismatch(path, 'null', value);
    case 'boolean':
      if (typeof value === 'boolean') return value;
      throw mismatch(path, 'a boolean', value);
    case 'int':
      if (Number.isInteger(value) && (value as number) >= INT_MIN && (value as number) <= INT_MAX) {
        return value;
      }
      throw mismatch(path, 'an int (32-bit integer)', value);
    case 'long':
      if (logicalType === 'timestamp-millis') return coerceTimestamp(value, path);
      if (Number.isSafeInteger(value)) return value;
      throw mismatch(path, 'a long (safe integer)', value);
    case 'float':
    case 'double':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      throw mismatch(path, 'a finite number', value);
    case 'string':
      if (typeof value === 'string') return value;
      throw mismatch(path, 'a string', value);
    default:
      throw new CoercionError(path, `${type} values cannot be replayed from JSON`);
  }
}

function coerceTimestamp(value: unknown, path: string): number {
  if (Number.isSafeInteger(value)) return value as number;
  if (typeof value === 'string' && ISO_DATE_TIME.test(value)) {
    const millis = Date.parse(value);
    if (Number.isFinite(millis)) return millis;
  }
  throw mismatch(path, 'epoch millis or an ISO 8601 date-time with a zone (Z or ±hh:mm)', value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mismatch(path: string, expected: string, value: unknown): CoercionError {
  return new CoercionError(path, `expected ${expected}, got ${describe(value)}`);
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
