// TopicCodec is transport-neutral (the embedded log uses it too): it lives in libs/core.
export type { TopicCodec } from '@engram/core';

export function valueSubject(topic: string): string {
  return `${topic}-value`;
}
