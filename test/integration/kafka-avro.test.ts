import { randomUUID } from 'node:crypto';
import {
  ensureTopics,
  EventPublisher,
  SchemaRejectedError,
  valueSubject,
  readWireFrame,
} from '@engram/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumeEvents,
  readCommitted,
  SCRATCH_SCHEMA,
  scratchCodec,
  testKafka,
  testRegistry,
  type ScratchEvent,
} from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

describe('Avro through the Schema Registry and Kafka', () => {
  const kafka = testKafka();
  const registry = testRegistry();
  const topic = uniqueName('it.avro');
  const codec = scratchCodec(topic);
  const publisher = new EventPublisher(kafka, registry);

  beforeAll(async () => {
    await registry.setGlobalCompatibility('BACKWARD');
    await ensureTopics(kafka, [{ topic, partitions: 2 }]);
    await publisher.connect();
  });

  afterAll(async () => {
    await publisher.disconnect();
  });

  it('should round-trip typed events in the Confluent wire format', async () => {
    const events: ScratchEvent[] = [1, 2, 3].map((n) => ({
      eventId: randomUUID(),
      sessionId: `session-${n % 2}`,
      text: `prompt ${n} — ünïcode ✓`,
    }));
    await publisher.publish(codec, events);

    const raw = await readCommitted(kafka, topic, 3);
    const schemaId = registry.idOf(valueSubject(topic));
    for (const message of raw) expect(readWireFrame(message.value).schemaId).toBe(schemaId);

    const received = await consumeEvents(kafka, codec, 3);

    const byId = (a: ScratchEvent, b: ScratchEvent) => a.eventId.localeCompare(b.eventId);
    expect([...received].sort(byId)).toEqual([...events].sort(byId));
  });

  it('should refuse an incompatible schema change under BACKWARD and accept a compatible one', async () => {
    const subject = valueSubject(uniqueName('it.compat'));
    const v1 = await registry.register(subject, SCRATCH_SCHEMA);

    const addsRequiredField = {
      ...SCRATCH_SCHEMA,
      fields: [...SCRATCH_SCHEMA.fields, { name: 'agentId', type: 'string' }],
    };
    expect(await registry.isCompatible(subject, addsRequiredField)).toBe(false);
    await expect(registry.register(subject, addsRequiredField)).rejects.toBeInstanceOf(
      SchemaRejectedError,
    );

    const addsOptionalField = {
      ...SCRATCH_SCHEMA,
      fields: [
        ...SCRATCH_SCHEMA.fields,
        { name: 'agentId', type: ['null', 'string'], default: null },
      ],
    };
    expect(await registry.isCompatible(subject, addsOptionalField)).toBe(true);
    const v2 = await registry.register(subject, addsOptionalField);
    expect(v2).not.toBe(v1);
  });
});
