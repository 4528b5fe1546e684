import { describe, expect, it } from 'vitest';
import { loadAvroSchema } from './avro-schemas';
import { backwardIncompatibility, isBackwardCompatible } from './compatibility';
import type { AvroComplexJson, AvroSchemaJson } from './schema-index';
import { TOPIC_LIST } from './topics';

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
