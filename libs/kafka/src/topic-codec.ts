import type { TopicCodec } from '@engram/core';
// TopicCodec is transport-neutral (the embedded log uses it too): it lives in libs/core.
export type { TopicCodec };

export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

/** A codec moved onto another topic name (prefixed installations, tests, benchmarks). */
export function codecOnTopic<E>(codec: TopicCodec<E>, topic: string): TopicCodec<E> {
  return { ...codec, topic, subject: valueSubject(topic) };
}
