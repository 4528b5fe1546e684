import { KafkaJSNonRetriableError, KafkaJSProtocolError, type Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { isProducerFencing, RecoverableTransactionalProducer } from './transactional-producer';

function protocolError(type: string): KafkaJSProtocolError {
  return new KafkaJSProtocolError(
    Object.assign(new Error(type), { type, code: 0, retriable: false }),
  );
}

/** A Kafka whose producers record what happened to them. */
function fakeKafka() {
  const producers: Array<{ id: number; connected: boolean; transactions: number }> = [];
  const kafka = {
    producer: () => {
      const state = { id: producers.length, connected: false, transactions: 0 };
      producers.push(state);
      return {
        connect: () => Promise.resolve(void (state.connected = true)),
        disconnect: () => Promise.resolve(void (state.connected = false)),
        transaction: () => Promise.resolve({ producer: state.id, n: ++state.transactions }),
      };
    },
  } as unknown as Kafka;
  return { kafka, producers };
}

describe('RecoverableTransactionalProducer (issue #19: a transaction timed out through an outage)', () => {
  it('should recognise the answers that leave a transactional producer unusable', () => {
    expect(isProducerFencing(protocolError('INVALID_PRODUCER_EPOCH'))).toBe(true);
    expect(isProducerFencing(protocolError('PRODUCER_FENCED'))).toBe(true);
    expect(
      isProducerFencing(
        new KafkaJSNonRetriableError('Transaction state exception: Invalid state transition'),
      ),
    ).toBe(true);
    expect(isProducerFencing(protocolError('NOT_COORDINATOR'))).toBe(false);
    expect(isProducerFencing(new Error('index is down'))).toBe(false);
  });

  it('should replace a fenced producer by a new one with the same id, and keep a working one', async () => {
    const { kafka, producers } = fakeKafka();
    const producer = new RecoverableTransactionalProducer(kafka, 'group-0');
    await producer.connect();
    await producer.transaction();
    producer.failed(new Error('index is down')); // not fencing: same producer
    await producer.transaction();
    expect(producers).toHaveLength(1);

    producer.failed(protocolError('INVALID_PRODUCER_EPOCH'));
    const next = await producer.transaction();
    expect(next).toEqual({ producer: 1, n: 1 });
    expect(producers.map((p) => p.connected)).toEqual([false, true]);
  });
});
