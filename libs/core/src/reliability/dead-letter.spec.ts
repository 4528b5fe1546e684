import { InvalidEventError } from '../errors/engram-error';
import { describe, expect, it } from 'vitest';
import { deadLetterHeaders, deadLetterTopic, DLQ_HEADERS } from './dead-letter';

describe('deadLetterHeaders', () => {
  it('should name the error, the source record, the service and the time', () => {
    const headers = deadLetterHeaders(
      new InvalidEventError('eventId is empty'),
      { topic: 'agent.prompts.v1', partition: 2, offset: '17' },
      'segmenter',
      new Date('2026-01-02T03:04:05Z'),
    );
    expect(headers).toEqual({
      [DLQ_HEADERS.errorClass]: 'InvalidEventError',
      [DLQ_HEADERS.errorMessage]: 'eventId is empty',
      [DLQ_HEADERS.sourceTopic]: 'agent.prompts.v1',
      [DLQ_HEADERS.sourcePartition]: '2',
      [DLQ_HEADERS.sourceOffset]: '17',
      [DLQ_HEADERS.service]: 'segmenter',
      [DLQ_HEADERS.time]: '2026-01-02T03:04:05.000Z',
    });
  });

  it('should name the dead-letter topic after its source', () => {
    expect(deadLetterTopic('agent.tool-calls.v1')).toBe('agent.tool-calls.v1.dlq');
  });
});
