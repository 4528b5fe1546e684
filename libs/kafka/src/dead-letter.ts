// The dead-letter naming and headers are transport-neutral (the embedded log writes the same
// headers); they live in libs/core and are re-exported here for existing imports.
export {
  deadLetterHeaders,
  deadLetterTopic,
  DLQ_HEADERS,
  DLQ_SUFFIX,
  type DeadLetterSource,
} from '@engram/core';
