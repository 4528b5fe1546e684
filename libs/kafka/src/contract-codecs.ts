import {
  AVRO_TYPE_OPTIONS,
  eventKey,
  envelopeProblems,
  fromAvroValue,
  loadAvroSchema,
  TOPIC_LIST,
  toAvroValue,
  topicSpec,
  type EventOfTopic,
  type TopicName,
} from '@engram/contracts';
import type { AvroRegistry, Compatibility } from './avro-registry';
import { valueSubject, type TopicCodec } from './topic-codec';

/** The codec of one of the SPEC §3 topics, built from its `schemas/avro` file. */
export function contractCodec<T extends TopicName>(topic: T): TopicCodec<EventOfTopic<T>> {
  const spec = topicSpec(topic);
  if (!spec) throw new Error(`${topic} is not a contract topic`);
  return {
    topic,
    subject: valueSubject(topic),
    schema: loadAvroSchema(spec.avroFile) as object,
    toAvro: (event) => toAvroValue(event),
    fromAvro: (value) => fromAvroValue(topic, value),
    key: (event) => eventKey(event),
    validate: (event) => envelopeProblems(event),
  };
}

/** The avsc options every contract codec is read and written with (a fresh copy: avsc mutates). */
export function contractAvroOptions(): { wrapUnions: 'auto' } {
  return { ...AVRO_TYPE_OPTIONS } as { wrapUnions: 'auto' };
}

/**
 * Registers the value schema of every contract topic under `<topic>-value` and sets each subject
 * to `compatibility`, so a later incompatible schema change is refused by the registry itself.
 * Idempotent: registering an identical schema returns the existing id.
 */
export async function registerContractSchemas(
  registry: AvroRegistry,
  compatibility: Compatibility = 'BACKWARD',
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const spec of TOPIC_LIST) {
    const subject = valueSubject(spec.topic);
    ids.set(subject, await registry.register(subject, loadAvroSchema(spec.avroFile) as object));
    await registry.setSubjectCompatibility(subject, compatibility);
  }
  return ids;
}
