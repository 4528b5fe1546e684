import {
  fromAvroValue,
  loadAvroSchema,
  toAvroValue,
  TOPIC_LIST,
  type Typed,
} from '@engram/contracts';
import { EVENT_FIXTURES } from '../../libs/contracts/src/testing/event-fixtures';
import {
  contractCodec,
  ensureTopics,
  EventPublisher,
  registerContractSchemas,
  SchemaRejectedError,
  valueSubject,
} from '@engram/kafka';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeEvents, testKafka, testRegistry } from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

describe('contract schemas in the real Schema Registry', () => {
  const registry = testRegistry();

  it('should register every SPEC §3 topic under <topic>-value, idempotently', async () => {
    const first = await registerContractSchemas(registry);
    const second = await registerContractSchemas(registry);
    expect([...first.keys()].sort()).toEqual(TOPIC_LIST.map((t) => valueSubject(t.topic)).sort());
    expect(second).toEqual(first);
  });

  it('should refuse an incompatible change to a real contract schema under BACKWARD', async () => {
    const subject = valueSubject(uniqueName('it.contract.prompts'));
    const prompts = loadAvroSchema('agent.prompts.v1') as { fields: Array<{ name: string }> };
    await registry.register(subject, prompts);
    await registry.setSubjectCompatibility(subject, 'BACKWARD');

    // A new required field without a default: old records cannot be read with it.
    const requiredField = {
      ...prompts,
      fields: [...prompts.fields, { name: 'repositoryUrl', type: 'string' }],
    };
    await expect(registry.register(subject, requiredField)).rejects.toBeInstanceOf(
      SchemaRejectedError,
    );
    // Changing a field's type (text: string → int) is refused too.
    const retyped = {
      ...prompts,
      fields: prompts.fields.map((f) => (f.name === 'text' ? { ...f, type: 'int' } : f)),
    };
    expect(await registry.isCompatible(subject, retyped)).toBe(false);
    // An optional field with a default is the allowed way to evolve.
    const optionalField = {
      ...prompts,
      fields: [
        ...prompts.fields,
        { name: 'repositoryUrl', type: ['null', 'string'], default: null },
      ],
    };
    expect(await registry.isCompatible(subject, optionalField)).toBe(true);
  });

  it('should accept the tool-call fields added after v1 (plannedSteps, resultSummary) under BACKWARD', async () => {
    // Issue #20: agent.tool-calls.v1 as first published, then as it is now.
    const subject = valueSubject(uniqueName('it.contract.tool-calls'));
    const current = loadAvroSchema('agent.tool-calls.v1') as { fields: Array<{ name: string }> };
    const added = ['plannedSteps', 'resultSummary'];
    const firstPublished = {
      ...current,
      fields: current.fields.filter((f) => !added.includes(f.name)),
    };
    expect(current.fields.length).toBe(firstPublished.fields.length + added.length);
    const v1 = await registry.register(subject, firstPublished);
    await registry.setSubjectCompatibility(subject, 'BACKWARD');
    expect(await registry.isCompatible(subject, current)).toBe(true);
    const v2 = await registry.register(subject, current);
    expect(v2).not.toBe(v1);

    // Framed records through the registry: an old record read by a new reader gets the defaults,
    // a new record read by an old reader loses only the new fields.
    const { plannedSteps, resultSummary, ...oldRecord } = EVENT_FIXTURES.ToolCallObserved;
    const readByNew = await registry.decode(await registry.encode(v1, oldRecord), current);
    expect(readByNew).toEqual({ ...oldRecord, plannedSteps: null, resultSummary: null });
    const newRecord = { ...oldRecord, plannedSteps, resultSummary };
    const readByOld = await registry.decode(await registry.encode(v2, newRecord), firstPublished);
    expect(readByOld).toEqual(oldRecord);
  });

  it('should accept TaskClassified.plannedSteps (added after v1) in the lifecycle union under BACKWARD', async () => {
    // Issue #20: agent.lifecycle.v1 (a union of records) as first published, then as it is now.
    type Record = { name: string; fields: Array<{ name: string }> };
    const subject = valueSubject(uniqueName('it.contract.lifecycle'));
    const current = loadAvroSchema('agent.lifecycle.v1') as Record[];
    const firstPublished = current.map((record) =>
      record.name === 'TaskClassified'
        ? { ...record, fields: record.fields.filter((f) => f.name !== 'plannedSteps') }
        : record,
    );
    const classified = (schema: Record[]) => schema.find((r) => r.name === 'TaskClassified')!;
    expect(classified(current).fields.length).toBe(classified(firstPublished).fields.length + 1);
    const v1 = await registry.register(subject, firstPublished);
    await registry.setSubjectCompatibility(subject, 'BACKWARD');
    expect(await registry.isCompatible(subject, current)).toBe(true);
    const v2 = await registry.register(subject, current);
    expect(v2).not.toBe(v1);

    // Framed union values through the registry, both ways.
    const { plannedSteps, ...oldFields } = EVENT_FIXTURES.TaskClassified;
    const oldEvent: Typed = { type: 'TaskClassified', ...oldFields };
    const readByNew = await registry.decode(
      await registry.encode(v1, toAvroValue(oldEvent)),
      current,
    );
    expect(fromAvroValue('agent.lifecycle.v1', readByNew)).toEqual({
      ...oldEvent,
      plannedSteps: null,
    });
    const newEvent: Typed = { ...oldEvent, plannedSteps };
    const readByOld = await registry.decode(
      await registry.encode(v2, toAvroValue(newEvent)),
      firstPublished,
    );
    expect(fromAvroValue('agent.lifecycle.v1', readByOld)).toEqual(oldEvent);
  });
});

describe('contract codecs through Kafka', () => {
  const kafka = testKafka();
  const registry = testRegistry();
  const publisher = new EventPublisher(kafka, registry);
  const topic = uniqueName('it.lifecycle');
  // The real lifecycle contract (a top-level union of records) on a topic of this test.
  const codec = { ...contractCodec('agent.lifecycle.v1'), topic, subject: valueSubject(topic) };

  beforeAll(async () => {
    await ensureTopics(kafka, [{ topic, partitions: 1 }]);
    await publisher.connect();
  });
  afterAll(() => publisher.disconnect());

  it('should round-trip union events and refuse to publish one that fails envelope validation', async () => {
    const ended: Typed = {
      type: 'SessionEnded',
      ...EVENT_FIXTURES.SessionEnded,
      eventId: randomUUID(),
    };
    const commit: Typed = {
      type: 'CommitMade',
      ...EVENT_FIXTURES.CommitMade,
      eventId: randomUUID(),
    };
    const emptyTenant: Typed = {
      type: 'SessionStarted',
      ...EVENT_FIXTURES.SessionStarted,
      eventId: randomUUID(),
      tenantId: ' ',
    };
    // Publishing validates too: the bad event is refused before it reaches the log.
    await expect(publisher.publish(codec, [emptyTenant] as never)).rejects.toThrow(/tenantId/);
    await publisher.publish(codec, [ended, commit] as never);

    const received = await consumeEvents(kafka, codec, 2);
    expect(received).toEqual([ended, commit]);
  });
});
