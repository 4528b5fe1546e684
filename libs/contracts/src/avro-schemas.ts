import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Type } from 'avsc';
import { MisconfigurationError } from '@engram/errors';
import { SchemaIndex, type AvroSchemaJson } from './schema-index';
import { AVRO_NAMESPACE, topicOfRecord, topicSpec, type RecordName } from './topics';

type ForSchemaOptions = NonNullable<Parameters<typeof Type.forSchema>[1]>;

/**
 * The avsc options every Engram component parses our schemas with (pass them to the Schema
 * Registry client too, so encode and decode agree):
 * - `wrapUnions: 'auto'`: nullable fields (`["null", T]`) are plain `T | null`, while the
 *   top-level unions of several records (agent.lifecycle.v1, memory.episode-boundaries.v1) are
 *   wrapped: `{ "engram.v1.SessionEnded": {...} }` (see toAvroValue / fromAvroValue).
 * - no `logicalTypes`: `timestamp-millis` fields stay `long`, i.e. epoch millis as `number`.
 *
 * avsc writes its type registry into the options object it is given, so pass a copy
 * (`{ ...AVRO_TYPE_OPTIONS }`); the constant is frozen so that a forgotten copy fails loudly.
 */
export const AVRO_TYPE_OPTIONS: Readonly<Pick<ForSchemaOptions, 'wrapUnions'>> = Object.freeze({
  wrapUnions: 'auto',
});

/**
 * The repository's `schemas/` directory, found by walking up from `from` (default: this file), so
 * it works from `libs/contracts/src` (tests) and from `dist/libs/contracts/src` (built).
 */
export function findSchemasDir(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'schemas');
    if (existsSync(join(candidate, 'avro'))) return candidate;
    if (dirname(dir) === dir) {
      throw new MisconfigurationError(
        `no schemas/avro directory in ${from} or above it; schemas/ must ship beside libs/ and dist/`,
      );
    }
  }
}

let cachedSchemasDir: string | undefined;

function schemasDir(): string {
  return (cachedSchemasDir ??= findSchemasDir());
}

/** The path of the Recall gRPC service definition. */
export function recallProtoPath(): string {
  return join(schemasDir(), 'proto', 'engram', 'recall', 'v1', 'recall.proto');
}

export function reviewProtoPath(): string {
  return join(schemasDir(), 'proto', 'engram', 'review', 'v1', 'review.proto');
}

/**
 * How Engram's servers and clients load their protos with @grpc/proto-loader: camelCase fields,
 * enums as names, int64 as numbers (epoch millis fit a double exactly), defaults filled in,
 * oneofs named by a virtual field.
 */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

const rawSchemas = new Map<string, string>();

/**
 * The schema JSON of `schemas/avro/<name>.avsc`; `name` is a topic (`agent.lifecycle.v1`) or a
 * file name. Returns a fresh copy each call (callers may mutate it).
 */
export function loadAvroSchema(name: string): AvroSchemaJson {
  const file = name.endsWith('.avsc') ? name : `${name}.avsc`;
  let text = rawSchemas.get(file);
  if (text === undefined) {
    const path = join(schemasDir(), 'avro', file);
    if (!existsSync(path)) throw new MisconfigurationError(`no Avro schema ${path}`);
    text = readFileSync(path, 'utf8');
    rawSchemas.set(file, text);
  }
  return JSON.parse(text) as AvroSchemaJson;
}

/** Parses a schema with the Engram avsc options. */
export function parseAvroType(schema: AvroSchemaJson | Type): Type {
  return schema instanceof Type
    ? schema
    : Type.forSchema(schema as never, { ...AVRO_TYPE_OPTIONS });
}

/** Memoises, per topic name, something built from the topic's value schema. */
function perTopic<T>(build: (schema: AvroSchemaJson) => T): (topic: string) => T {
  const cache = new Map<string, T>();
  return (topic) => {
    let value = cache.get(topic);
    if (value === undefined) {
      const spec = topicSpec(topic);
      if (!spec) throw new MisconfigurationError(`unknown topic ${topic}`);
      value = build(loadAvroSchema(spec.avroFile));
      cache.set(topic, value);
    }
    return value;
  };
}

/** The avsc Type of a topic's value schema (cached). */
export const avroTypeOfTopic: (topic: string) => Type = perTopic(parseAvroType);

/** The named types of a topic's schema, for walking the raw JSON (cached). */
export const schemaIndexOfTopic: (topic: string) => SchemaIndex = perTopic(
  (schema) => new SchemaIndex(schema),
);

/**
 * The self-contained schema of one record (every named type it uses defined inline), e.g. one
 * branch of the lifecycle union.
 */
export function recordSchema(name: RecordName): AvroSchemaJson {
  const index = schemaIndexOfTopic(topicOfRecord(name).topic);
  return index.inline(`${AVRO_NAMESPACE}.${name}`);
}
