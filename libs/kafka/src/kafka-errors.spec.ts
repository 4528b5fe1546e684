import { DecodeError, DownstreamUnavailableError, failureVerdict } from '@engram/core';
import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
} from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { classifyingKafkaErrors, classifyKafkaError } from './kafka-errors';

/** A protocol error as kafkajs builds it from a broker's error code entry. */
function protocolError(type: string, retriable: boolean): KafkaJSProtocolError {
  return new KafkaJSProtocolError(Object.assign(new Error(type), { type, code: 0, retriable }));
}

describe('classifyKafkaError (issue #19: a broker outage is retried, never dead-lettered)', () => {
  const outages: Array<[string, Error]> = [
    ['a refused connection', new KafkaJSConnectionError('Connection error: connect ECONNREFUSED')],
    ['a request timeout', new KafkaJSRequestTimeoutError('Request Produce(key: 0) timed out')],
    [
      "kafkajs' own retries run out",
      new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection timeout'), {
        retryCount: 8,
        retryTime: 30_000,
      }),
    ],
    ['a broker kafkajs has not reconnected', new Error('Broker not connected')],
    ['a retriable broker answer', protocolError('NOT_COORDINATOR', true)],
  ];

  it.each(outages)('should make %s retriable for as long as it lasts', (_, error) => {
    const classified = classifyKafkaError(error);
    expect(classified).toBeInstanceOf(DownstreamUnavailableError);
    expect((classified as Error).cause).toBe(error);
    // Past any number of attempts: a long outage never reaches the dead-letter topic.
    expect(failureVerdict(classified, 1_000, 5)).toBe('retry');
  });

  it('should leave failures that are not an outage as they are', () => {
    const fenced = protocolError('PRODUCER_FENCED', false);
    const state = new KafkaJSNonRetriableError('Transaction state exception');
    const decode = new DecodeError('bad bytes');
    const bug = new TypeError('x is undefined');
    for (const error of [fenced, state, decode, bug]) {
      expect(classifyKafkaError(error)).toBe(error);
    }
    expect(failureVerdict(classifyKafkaError(fenced), 4, 5)).toBe('dead-letter');
  });

  it('should classify what a Kafka operation throws and pass its result through', async () => {
    await expect(classifyingKafkaErrors(() => Promise.resolve(7))).resolves.toBe(7);
    await expect(
      classifyingKafkaErrors(() => Promise.reject(new KafkaJSConnectionError('ECONNREFUSED'))),
    ).rejects.toBeInstanceOf(DownstreamUnavailableError);
  });
});
