// Drift between the TypeScript contracts and schemas/avro: each typed fixture (which the compiler
// holds to its interface) must have exactly the schema's fields, recursively, and survive an Avro
// round trip unchanged, both fully populated and with every nullable field null.
import type { Type } from 'avsc';
import { describe, expect, it } from 'vitest';
import { avroTypeOfTopic, recordSchema, parseAvroType } from './avro-schemas';
import { fromAvroValue, toAvroValue } from './avro-values';
import { EVENT_FIXTURES } from './testing/event-fixtures';
import { RECORD_NAMES, topicOfRecord, type RecordName, type TopicName, type Typed } from './topics';

interface AvroField {
  name: string;
  type: Type;
}

/** Where `value` does not have exactly the fields of `type`, at any level (empty: none). */
function shapeMismatches(value: unknown, type: Type, path: string): string[] {
  switch (type.typeName) {
    case 'record': {
      const fields = (type as unknown as { fields: AvroField[] }).fields;
      const names = new Set(fields.map((f) => f.name));
      const keys = Object.keys(value as object);
      const own = value as Record<string, unknown>;
      return [
        ...keys.filter((k) => !names.has(k)).map((k) => `${path}.${k}: not in the schema`),
        ...[...names].filter((n) => !keys.includes(n)).map((n) => `${path}.${n}: missing`),
        ...fields.flatMap((f) =>
          f.name in own ? shapeMismatches(own[f.name], f.type, `${path}.${f.name}`) : [],
        ),
      ];
    }
    case 'union:unwrapped': {
      if (value === null) return [];
      const branches = (type as unknown as { types: Type[] }).types.filter(
        (t) => t.typeName !== 'null',
      );
      if (branches.length !== 1) return [`${path}: not a nullable union`];
      return shapeMismatches(value, branches[0], path);
    }
    case 'array': {
      const items = (type as unknown as { itemsType: Type }).itemsType;
      return (value as unknown[]).flatMap((item, i) =>
        shapeMismatches(item, items, `${path}[${i}]`),
      );
    }
    default:
      return [];
  }
}

/** The fixture with every nullable (top-level) field set to null. */
function withNullsEverywhere(name: RecordName): Record<string, unknown> {
  const type = parseAvroType(recordSchema(name));
  const fields = (type as unknown as { fields: AvroField[] }).fields;
  const copy: Record<string, unknown> = { ...EVENT_FIXTURES[name] };
  for (const field of fields) {
    if (field.type.typeName === 'union:unwrapped') copy[field.name] = null;
  }
  return copy;
}

function roundTrip(event: Typed): unknown {
  const topic = topicOfRecord(event.type).topic as TopicName;
  const type = avroTypeOfTopic(topic);
  return fromAvroValue(topic, type.fromBuffer(type.toBuffer(toAvroValue(event))));
}

describe('TypeScript contracts against schemas/avro', () => {
  it.each(RECORD_NAMES.map((name) => [name] as const))(
    'should give %s exactly the schema fields, nested records included',
    (name) => {
      const type = parseAvroType(recordSchema(name));
      expect(shapeMismatches(EVENT_FIXTURES[name], type, name)).toEqual([]);
    },
  );

  it.each(RECORD_NAMES.map((name) => [name] as const))(
    'should round-trip a fully populated %s through its topic schema',
    (name) => {
      const event = { type: name, ...EVENT_FIXTURES[name] } as Typed;
      expect(roundTrip(event)).toEqual(event);
    },
  );

  it.each(RECORD_NAMES.map((name) => [name] as const))(
    'should round-trip %s with every nullable field null',
    (name) => {
      const event = { type: name, ...withNullsEverywhere(name) } as Typed;
      expect(roundTrip(event)).toEqual(event);
    },
  );
});
