import { errorClassName, errorMessage } from '../errors/engram-error';

export const DLQ_SUFFIX = '.dlq';

export function deadLetterTopic(topic: string): string {
  return `${topic}${DLQ_SUFFIX}`;
}

export interface DeadLetterSource {
  topic: string;
  partition: number;
  offset: string;
}

/** Header names on every dead-lettered record (SPEC §11). */
export const DLQ_HEADERS = {
  errorClass: 'engram.error.class',
  errorMessage: 'engram.error.message',
  sourceTopic: 'engram.source.topic',
  sourcePartition: 'engram.source.partition',
  sourceOffset: 'engram.source.offset',
  service: 'engram.service',
  time: 'engram.dead-lettered.at',
} as const;

const MAX_MESSAGE_LENGTH = 2_000;

export function deadLetterHeaders(
  error: unknown,
  source: DeadLetterSource,
  service: string,
  now: Date,
): Record<string, string> {
  return {
    [DLQ_HEADERS.errorClass]: errorClassName(error),
    [DLQ_HEADERS.errorMessage]: errorMessage(error).slice(0, MAX_MESSAGE_LENGTH),
    [DLQ_HEADERS.sourceTopic]: source.topic,
    [DLQ_HEADERS.sourcePartition]: String(source.partition),
    [DLQ_HEADERS.sourceOffset]: source.offset,
    [DLQ_HEADERS.service]: service,
    [DLQ_HEADERS.time]: now.toISOString(),
  };
}
