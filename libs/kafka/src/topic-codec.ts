/**
 * How one topic's events map to Avro and to keys. Built from libs/contracts for the real topics;
 * tests can build their own for scratch topics.
 */
export interface TopicCodec<E> {
  topic: string;
  /** Schema Registry subject (TopicNameStrategy: `<topic>-value`). */
  subject: string;
  schema: object;
  toAvro(event: E): unknown;
  fromAvro(value: unknown): E;
  key(event: E): string;
  /** Semantic checks beyond the schema; each string names a problem. */
  validate?(event: E): string[];
}

export function valueSubject(topic: string): string {
  return `${topic}-value`;
}
