import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createKafka, reliableProducerConfig } from './kafka-client';

const EOS_WARNING = 'Limiting retries for the idempotent producer may invalidate EoS guarantees';

/** The kafkajs warnings logged while `build` runs (kafkajs logs through the Nest logger). */
function warningsDuring(build: () => void): string[] {
  const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  build();
  return warn.mock.calls.map(([message]) => String(message));
}

describe('reliableProducerConfig', () => {
  afterEach(() => vi.restoreAllMocks());

  it('should leave an idempotent producer its unbounded retries (issue #19)', () => {
    const config = reliableProducerConfig({ transactionalId: 'txn' });
    expect(config.idempotent).toBe(true);
    expect(config.retry?.retries).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("should not make kafkajs warn that limited retries may invalidate exactly-once, whatever the client's retries", () => {
    const kafka = createKafka({ brokers: ['127.0.0.1:1'], clientId: 'spec' });
    const warnings = warningsDuring(() => {
      kafka.producer(reliableProducerConfig());
      kafka.producer(reliableProducerConfig({ transactionalId: 'txn' }));
    });
    expect(warnings.filter((line) => line.includes(EOS_WARNING))).toEqual([]);
  });

  it('should still see the warning for a producer with the client retries (the check can fail)', () => {
    const kafka = createKafka({ brokers: ['127.0.0.1:1'], clientId: 'spec' });
    const warnings = warningsDuring(() => kafka.producer({ idempotent: true }));
    expect(warnings.filter((line) => line.includes(EOS_WARNING))).toHaveLength(1);
  });
});
