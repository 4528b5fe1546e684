import {
  eventKey,
  envelopeProblems,
  fromAvroValue,
  loadAvroSchema,
  toAvroValue,
  topicSpec,
  type EventOfTopic,
  type TopicName,
} from '@engram/contracts';
import type { TopicCodec } from './stream-stage';

// The codecs of the contract topics are transport-neutral: Kafka writes their Avro in the
// Confluent wire format, the embedded log their events as JSON checked against the same schema.
// A service topology (one definition for both modes) names its topics with them.

/** The Schema Registry subject of a topic's values (TopicNameStrategy). */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

/** A codec moved onto another topic name (prefixed installations, tests, benchmarks). */
export function codecOnTopic<E>(codec: TopicCodec<E>, topic: string): TopicCodec<E> {
  return { ...codec, topic, subject: valueSubject(topic) };
}

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

/**
 * A service's topic names under a prefix (one cluster, several isolated installations or test
 * runs): every name of `topics` prefixed, the keys kept.
 */
export function prefixedTopicNames<T extends Record<keyof T, string>>(
  topics: T,
  prefix: string,
): T {
  const prefixed = { ...topics };
  for (const name of Object.keys(prefixed) as (keyof T)[]) {
    prefixed[name] = `${prefix}${topics[name]}` as T[keyof T];
  }
  return prefixed;
}
