import { describe, expect, it } from 'vitest';
import { loadAvroSchema, parseAvroType } from './avro-schemas';
import { fromAvroValue, toAvroValue } from './avro-values';
import { backwardIncompatibility, isBackwardCompatible } from './compatibility';
import type { AvroComplexJson, AvroSchemaJson } from './schema-index';
import { EVENT_FIXTURES } from './testing/event-fixtures';
import { TOPIC_LIST, type Typed } from './topics';

const v1: AvroComplexJson = {
  type: 'record',
  name: 'Thing',
  namespace: 'engram.test',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['a', 'b'] } },
  ],
};

function withField(
  schema: AvroComplexJson,
  field: AvroComplexJson['fields'] & object,
): AvroComplexJson {
  return { ...schema, fields: [...schema.fields!, ...field] };
}

describe('isBackwardCompatible', () => {
  it('should accept adding an optional field with a null default', () => {
    const v2 = withField(v1, [{ name: 'note', type: ['null', 'string'], default: null }]);
    expect(isBackwardCompatible(v1, v2)).toBe(true);
  });

  it('should refuse adding a required field without a default', () => {
    const v2 = withField(v1, [{ name: 'note', type: 'string' }]);
    expect(isBackwardCompatible(v1, v2)).toBe(false);
    expect(backwardIncompatibility(v1, v2)).toBeDefined();
  });

  it('should accept removing a field and adding an enum symbol', () => {
    const v2: AvroComplexJson = {
      ...v1,
      fields: [{ name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['a', 'b', 'c'] } }],
    };
    expect(isBackwardCompatible(v1, v2)).toBe(true);
  });

  it('should refuse removing an enum symbol', () => {
    const v2: AvroComplexJson = {
      ...v1,
      fields: [
        v1.fields![0],
        { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['a'] } },
      ],
    };
    expect(isBackwardCompatible(v1, v2)).toBe(false);
  });

  it('should accept a new branch in a top-level union', () => {
    const lifecycle = loadAvroSchema('agent.lifecycle.v1') as AvroSchemaJson[];
    const extended = [
      ...lifecycle,
      {
        type: 'record',
        name: 'SomethingNew',
        namespace: 'engram.v1',
        fields: [{ name: 'eventId', type: 'string' }],
      },
    ];
    expect(isBackwardCompatible(lifecycle, extended)).toBe(true);
    expect(isBackwardCompatible(extended, lifecycle)).toBe(false);
  });

  it.each(TOPIC_LIST.map((t) => [t.topic] as const))(
    'should find %s compatible with itself',
    (topic) => {
      expect(isBackwardCompatible(loadAvroSchema(topic), loadAvroSchema(topic))).toBe(true);
    },
  );
});

/** Fields added to a v1 contract after it shipped (optional, default null), by record. */
const ADDED_AFTER_V1: Record<string, Record<string, string[]>> = {
  'agent.tool-calls.v1': { ToolCallObserved: ['plannedSteps', 'resultSummary'] },
  'agent.lifecycle.v1': { TaskClassified: ['plannedSteps'] },
};

/** The schema as first published: the current one without the fields added since. */
function asFirstPublished(topic: string): AvroSchemaJson {
  const current = loadAvroSchema(topic);
  const withoutAdded = (record: AvroComplexJson): AvroComplexJson => {
    const added = new Set(ADDED_AFTER_V1[topic][record.name!] ?? []);
    return { ...record, fields: record.fields!.filter((f) => !added.has(f.name)) };
  };
  return Array.isArray(current)
    ? current.map((record) => withoutAdded(record as AvroComplexJson))
    : withoutAdded(current as AvroComplexJson);
}

/** The fields of `record` added since v1, as [name, first union branch, default]. */
function addedFields(topic: string, record: string): unknown[][] {
  const schema = loadAvroSchema(topic);
  const records = (Array.isArray(schema) ? schema : [schema]) as AvroComplexJson[];
  const fields = records.find((r) => r.name === record)!.fields!;
  return fields
    .filter((f) => ADDED_AFTER_V1[topic][record].includes(f.name))
    .map((f) => [f.name, (f.type as string[])[0], f.default]);
}

describe('agent.tool-calls.v1 evolution (plannedSteps, resultSummary; issue #20)', () => {
  const topic = 'agent.tool-calls.v1';
  const oldType = parseAvroType(asFirstPublished(topic));
  const newType = parseAvroType(loadAvroSchema(topic));
  const { plannedSteps, resultSummary, ...oldRecord } = EVENT_FIXTURES.ToolCallObserved;

  it('should add only optional fields with a null default, so the registry accepts it', () => {
    expect(addedFields(topic, 'ToolCallObserved')).toEqual([
      ['plannedSteps', 'null', null],
      ['resultSummary', 'null', null],
    ]);
    expect(backwardIncompatibility(asFirstPublished(topic), loadAvroSchema(topic))).toBeUndefined();
  });

  it('should read a record written before the fields existed, with both null', () => {
    const written = oldType.toBuffer(oldRecord);
    const read = newType.fromBuffer(written, newType.createResolver(oldType)) as object;
    expect(read).toEqual({ ...oldRecord, plannedSteps: null, resultSummary: null });
  });

  it('should let a reader that predates the fields read a new record (they are skipped)', () => {
    expect(plannedSteps).toBe(4);
    expect(resultSummary).not.toBeNull();
    const written = newType.toBuffer(EVENT_FIXTURES.ToolCallObserved);
    const read = oldType.fromBuffer(written, oldType.createResolver(newType)) as object;
    expect(read).toEqual(oldRecord);
  });

  it('should write the defaults for a producer that omits the new fields', () => {
    const read = newType.fromBuffer(newType.toBuffer(oldRecord)) as object;
    expect(read).toEqual({ ...oldRecord, plannedSteps: null, resultSummary: null });
  });
});

describe('agent.lifecycle.v1 evolution (TaskClassified.plannedSteps; issue #20)', () => {
  const topic = 'agent.lifecycle.v1';
  const oldType = parseAvroType(asFirstPublished(topic));
  const newType = parseAvroType(loadAvroSchema(topic));
  const { plannedSteps, ...oldRecord } = EVENT_FIXTURES.TaskClassified;
  const wrap = (fields: object) => toAvroValue({ type: 'TaskClassified', ...fields } as Typed);
  const unwrap = (value: unknown) => fromAvroValue(topic, value);

  it('should add only an optional int with a null default, so the registry accepts it', () => {
    expect(addedFields(topic, 'TaskClassified')).toEqual([['plannedSteps', 'null', null]]);
    expect(backwardIncompatibility(asFirstPublished(topic), loadAvroSchema(topic))).toBeUndefined();
  });

  it('should read a TaskClassified written before the field existed, with null', () => {
    const written = oldType.toBuffer(wrap(oldRecord));
    const read = unwrap(newType.fromBuffer(written, newType.createResolver(oldType)));
    expect(read).toEqual({ type: 'TaskClassified', ...oldRecord, plannedSteps: null });
  });

  it('should let a reader that predates the field read a new one (it is skipped)', () => {
    expect(plannedSteps).toBe(6);
    const written = newType.toBuffer(wrap(EVENT_FIXTURES.TaskClassified));
    const read = unwrap(oldType.fromBuffer(written, oldType.createResolver(newType)));
    expect(read).toEqual({ type: 'TaskClassified', ...oldRecord });
  });

  it('should write the default for a producer that omits it', () => {
    const read = unwrap(newType.fromBuffer(newType.toBuffer(wrap(oldRecord))));
    expect(read).toEqual({ type: 'TaskClassified', ...oldRecord, plannedSteps: null });
  });
});
