// TopicCodec and the contract codecs are transport-neutral (the embedded log uses them too): they
// live in libs/core; re-exported here for the Kafka adapters' callers.
export type { TopicCodec } from '@engram/core';
export { codecOnTopic, valueSubject } from '@engram/core';
