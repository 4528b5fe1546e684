import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'avsc';
import { MisconfigurationError } from '@engram/errors';
import { describe, expect, it } from 'vitest';
import { CHANNEL_KINDS, PROMPT_SOURCES, TOOL_OUTCOMES } from './agent-events';
import {
  AVRO_TYPE_OPTIONS,
  avroTypeOfTopic,
  findSchemasDir,
  loadAvroSchema,
  recallProtoPath,
  recordSchema,
} from './avro-schemas';
import { BOUNDARY_REASONS, EPISODE_OUTCOMES } from './episode-events';
import { TASK_COMPLEXITIES } from './lifecycle-events';
import {
  E2E_OBSERVATION_TYPES,
  MEMORY_SCOPES,
  MEMORY_SOURCES,
  MEMORY_TYPES,
  RELATION_TYPES,
} from './memory';
import { PROPOSAL_KINDS, PROPOSAL_STATUSES } from './proposal';
import { SchemaIndex, type AvroComplexJson, type AvroSchemaJson } from './schema-index';
import { AVRO_NAMESPACE, RECORD_NAMES, TOPIC_LIST } from './topics';

const ENVELOPE = [
  'eventId',
  'tenantId',
  'projectId',
  'sessionId',
  'agentId',
  'userId',
  'timestamp',
  'schemaVersion',
];

function topLevelRecords(schema: AvroSchemaJson): AvroComplexJson[] {
  return (Array.isArray(schema) ? schema : [schema]) as AvroComplexJson[];
}

/** Every field of every record in a schema document. */
function allFields(schema: AvroSchemaJson): {
  record: string;
  name: string;
  type: AvroSchemaJson;
  default?: unknown;
  hasDefault: boolean;
}[] {
  const out: ReturnType<typeof allFields> = [];
  const visit = (s: AvroSchemaJson): void => {
    if (typeof s === 'string') return;
    if (Array.isArray(s)) return s.forEach(visit);
    for (const field of s.fields ?? []) {
      out.push({ record: s.name!, ...field, hasDefault: 'default' in field });
      visit(field.type);
    }
    if (typeof s.type !== 'string') visit(s.type);
    if (s.items !== undefined) visit(s.items);
  };
  visit(schema);
  return out;
}

describe('schemas/avro', () => {
  const dir = join(findSchemasDir(), 'avro');

  it('should hold exactly one schema file per catalogued topic', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.avsc'));
    expect(files.sort()).toEqual(TOPIC_LIST.map((t) => t.avroFile).sort());
  });

  it.each(TOPIC_LIST.map((t) => [t.topic, t] as const))(
    'should parse %s with avsc and declare the catalogued records',
    (_topic, spec) => {
      const raw = JSON.parse(readFileSync(join(dir, spec.avroFile), 'utf8')) as AvroSchemaJson;
      expect(() => Type.forSchema(raw as never, { ...AVRO_TYPE_OPTIONS })).not.toThrow();
      const records = topLevelRecords(raw);
      expect(Array.isArray(raw)).toBe(spec.union);
      expect(records.map((r) => `${r.namespace}.${r.name}`)).toEqual(
        spec.records.map((name) => `${AVRO_NAMESPACE}.${name}`),
      );
      for (const record of records) {
        expect(record.fields!.slice(0, ENVELOPE.length).map((f) => f.name)).toEqual(ENVELOPE);
      }
    },
  );

  it('should keep `type` free in every top-level record (it tags replay lines, SPEC §12)', () => {
    const offending = TOPIC_LIST.flatMap((spec) => topLevelRecords(loadAvroSchema(spec.topic)))
      .filter((record) => record.fields!.some((f) => f.name === 'type'))
      .map((record) => record.name);
    expect(offending).toEqual([]);
  });

  it.each(TOPIC_LIST.map((t) => [t.topic] as const))(
    'should give every optional field of %s a null default (BACKWARD-compatible additions)',
    (topic) => {
      const offending = allFields(loadAvroSchema(topic))
        .filter((f) => Array.isArray(f.type) && f.type.includes('null'))
        .filter((f) => (f.type as AvroSchemaJson[])[0] !== 'null' || f.default !== null)
        .map((f) => `${f.record}.${f.name}`);
      expect(offending).toEqual([]);
    },
  );

  it('should type every envelope timestamp as a timestamp-millis long', () => {
    const timestamps = TOPIC_LIST.flatMap((spec) => allFields(loadAvroSchema(spec.topic))).filter(
      (f) => f.name === 'timestamp',
    );
    expect(timestamps.length).toBeGreaterThanOrEqual(RECORD_NAMES.length);
    for (const field of timestamps) {
      expect(field.type).toEqual({ type: 'long', logicalType: 'timestamp-millis' });
    }
  });

  it('should decode timestamps as epoch-millis numbers (no logical type mapping)', () => {
    const type = avroTypeOfTopic('agent.prompts.v1');
    const field = (type as unknown as { fields: { name: string; type: Type }[] }).fields.find(
      (f) => f.name === 'timestamp',
    );
    expect(field!.type.typeName).toBe('long');
  });

  it('should keep the TypeScript enum lists equal to the schema enums', () => {
    const expected: Record<string, readonly string[]> = {
      PromptSource: PROMPT_SOURCES,
      ChannelKind: CHANNEL_KINDS,
      ToolOutcome: TOOL_OUTCOMES,
      TaskComplexity: TASK_COMPLEXITIES,
      BoundaryReason: BOUNDARY_REASONS,
      EpisodeOutcome: EPISODE_OUTCOMES,
      MemoryType: MEMORY_TYPES,
      MemoryScope: MEMORY_SCOPES,
      MemorySource: MEMORY_SOURCES,
      RelationType: RELATION_TYPES,
      E2eObservationType: E2E_OBSERVATION_TYPES,
      ProposalKind: PROPOSAL_KINDS,
      ProposalStatus: PROPOSAL_STATUSES,
    };
    const found = new Map<string, string[]>();
    for (const spec of TOPIC_LIST) {
      const index = new SchemaIndex(loadAvroSchema(spec.topic));
      for (const name of Object.keys(expected)) {
        const def = index.lookup(name, AVRO_NAMESPACE)?.def;
        if (def) found.set(name, def.symbols!);
      }
    }
    const schemaEnums = Object.fromEntries(Object.keys(expected).map((n) => [n, found.get(n)]));
    const tsEnums = Object.fromEntries(Object.entries(expected).map(([n, s]) => [n, [...s]]));
    expect(schemaEnums).toEqual(tsEnums);
  });
});

describe('loadAvroSchema', () => {
  it('should load by topic name or file name and return a fresh copy', () => {
    const a = loadAvroSchema('agent.prompts.v1') as AvroComplexJson;
    a.name = 'Changed';
    expect((loadAvroSchema('agent.prompts.v1.avsc') as AvroComplexJson).name).toBe(
      'PromptSubmitted',
    );
  });

  it('should refuse an unknown schema name', () => {
    expect(() => loadAvroSchema('no.such.topic')).toThrow(MisconfigurationError);
  });
});

describe('findSchemasDir', () => {
  it('should find schemas/ walking up from a nested build directory', () => {
    const root = findSchemasDir();
    const nested = join(root, '..', 'dist', 'libs', 'contracts', 'src');
    expect(findSchemasDir(nested)).toBe(root);
  });

  it('should fail with the fix in the message when there is no schemas/ above', () => {
    const lonely = mkdtempSync(join(tmpdir(), 'engram-contracts-'));
    expect(() => findSchemasDir(lonely)).toThrow(/no schemas\/avro directory in .* or above it/);
  });

  it('should locate the recall proto', () => {
    expect(recallProtoPath()).toMatch(/schemas\/proto\/engram\/recall\/v1\/recall\.proto$/);
  });
});

describe('recordSchema', () => {
  it.each(RECORD_NAMES.map((name) => [name] as const))(
    'should give %s a self-contained schema that parses alone',
    (name) => {
      const schema = recordSchema(name) as AvroComplexJson;
      expect(schema.name).toBe(name);
      expect(schema.namespace).toBe(AVRO_NAMESPACE);
      expect(() => Type.forSchema(schema as never, { ...AVRO_TYPE_OPTIONS })).not.toThrow();
    },
  );

  it('should inline types first defined in another union branch', () => {
    const failed = JSON.stringify(recordSchema('ValidationFailed'));
    expect(failed).toContain('"name":"QaIssue"');
    expect(failed).toContain('"name":"WorkUnitRef"');
  });
});
