import { InvalidEventError } from '@engram/errors';
import {
  AVRO_NAMESPACE,
  topicOfRecord,
  topicSpec,
  type EventOfTopic,
  type TopicName,
  type Typed,
} from './topics';

/**
 * A typed event → the value avsc encodes for its topic: the fields without `type`, wrapped in
 * `{ "engram.v1.<Record>": fields }` when the topic is a union (AVRO_TYPE_OPTIONS wraps those).
 */
export function toAvroValue(event: Typed): Record<string, unknown> {
  const { type, ...fields } = event;
  return topicOfRecord(type).union ? { [`${AVRO_NAMESPACE}.${type}`]: fields } : fields;
}

/** A value decoded by avsc from `topic` → the typed event (`{ type, ...fields }`). */
export function fromAvroValue<T extends TopicName>(topic: T, value: unknown): EventOfTopic<T> {
  const spec = topicSpec(topic);
  if (!spec) throw new InvalidEventError(`unknown topic ${topic}`, { topic });
  if (typeof value !== 'object' || value === null) {
    throw new InvalidEventError(`${topic}: decoded value is not a record`, { topic });
  }
  let type: string = spec.records[0];
  let fields = value as Record<string, unknown>;
  if (spec.union) {
    const branches = Object.keys(fields);
    const branch = branches[0] ?? '';
    type = branch.startsWith(`${AVRO_NAMESPACE}.`) ? branch.slice(AVRO_NAMESPACE.length + 1) : '';
    if (branches.length !== 1 || !(spec.records as readonly string[]).includes(type)) {
      throw new InvalidEventError(`${topic}: not a wrapped union value (${branches.join(', ')})`, {
        topic,
      });
    }
    fields = fields[branch] as Record<string, unknown>;
  }
  return { type, ...fields } as EventOfTopic<T>;
}
