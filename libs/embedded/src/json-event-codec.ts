import { parseAvroType, type AvroSchemaJson } from '@engram/contracts';
import {
  DecodeError,
  errorMessage,
  InvalidEventError,
  type Delivered,
  type TopicCodec,
} from '@engram/core';
import type { Type } from 'avsc';
import type { AppendRecord, LogRecord } from './sqlite-event-log';

/**
 * Typed events in the embedded log: the value is the typed event as JSON text (`{"type":
 * "PromptSubmitted", …}`), readable with the sqlite3 shell. Both ways the event is checked like
 * the Kafka path checks it — against the topic's Avro schema (what encoding to the Confluent wire
 * format would enforce) and with `codec.validate` — so a bug that would break distributed mode
 * breaks embedded mode too.
 */

const avroTypes = new WeakMap<object, Type>();

function avroTypeOf<E>(codec: TopicCodec<E>): Type {
  let type = avroTypes.get(codec.schema);
  if (!type) {
    type = parseAvroType(codec.schema as AvroSchemaJson);
    avroTypes.set(codec.schema, type);
  }
  return type;
}

/** Paths of the fields that do not fit the schema (empty when the value fits). */
function schemaMismatches<E>(codec: TopicCodec<E>, event: E): string[] {
  const paths: string[] = [];
  avroTypeOf(codec).isValid(codec.toAvro(event), {
    errorHook: (path: string[]) => paths.push(path.length > 0 ? path.join('.') : '(value)'),
  });
  return paths;
}

/** A typed event → the record to append (key from the codec). Throws InvalidEventError. */
export function encodeEvent<E>(
  codec: TopicCodec<E>,
  event: E,
  partition?: number,
): AppendRecord & { key: string; value: string } {
  const mismatches = schemaMismatches(codec, event);
  const problems = [
    ...(mismatches.length > 0 ? [`does not fit the schema at ${mismatches.join(', ')}`] : []),
    ...(codec.validate?.(event) ?? []),
  ];
  if (problems.length > 0) {
    throw new InvalidEventError(`${codec.topic}: ${problems.join('; ')}`, { topic: codec.topic });
  }
  return { key: codec.key(event), value: JSON.stringify(event), partition };
}

/**
 * A stored record → a delivered, validated event. Throws DecodeError for a value that is not a
 * JSON object fitting the schema (the embedded twin of undecodable bytes), InvalidEventError when
 * the codec's semantic checks fail.
 */
export function decodeEvent<E>(codec: TopicCodec<E>, record: LogRecord): Delivered<E> {
  const where = `${record.topic}[${record.partition}]@${record.offset}`;
  const context = { topic: record.topic, partition: record.partition, offset: record.offset };
  if (record.value === null) {
    throw new DecodeError(`${where}: a tombstone is not an event`, context);
  }
  const text = typeof record.value === 'string' ? record.value : record.value.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new DecodeError(`${where}: not JSON (${errorMessage(error)})`, context, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DecodeError(`${where}: not a JSON object`, context);
  }
  const event = parsed as E;
  let mismatches: string[];
  try {
    mismatches = schemaMismatches(codec, event);
  } catch (error) {
    throw new DecodeError(
      `${where}: cannot map to ${codec.topic}: ${errorMessage(error)}`,
      context,
      {
        cause: error,
      },
    );
  }
  if (mismatches.length > 0) {
    throw new DecodeError(`${where}: does not fit the schema at ${mismatches.join(', ')}`, context);
  }
  const problems = codec.validate?.(event) ?? [];
  if (problems.length > 0) throw new InvalidEventError(`${where}: ${problems.join('; ')}`, context);
  return {
    event,
    topic: record.topic,
    partition: record.partition,
    offset: String(record.offset),
    key: record.key,
    headers: record.headers,
  };
}
