import { DownstreamUnavailableError, FRICTION_SIGNALS } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { openDistributedFrictionSource } from './friction-distributed';
import { DISTRIBUTED_FRICTION_GAPS } from './friction-distributed-source';

// The distributed source's wiring without the servers (the contract suite runs it on them, in
// test/integration/friction-distributed.test.ts): its declared gaps, and an unreachable store
// named with its configured endpoint. Port 9 (discard) is closed here: a real refused connection.
describe('the distributed friction source', () => {
  it('should declare each gap once, for a signal the port knows, with its reason, none missing whole', () => {
    const signals = DISTRIBUTED_FRICTION_GAPS.map((gap) => gap.signal);
    expect(new Set(signals).size).toBe(signals.length);
    for (const gap of DISTRIBUTED_FRICTION_GAPS) {
      expect(FRICTION_SIGNALS).toContain(gap.signal);
      expect(gap.reason.length).toBeGreaterThan(40);
    }
    expect(
      DISTRIBUTED_FRICTION_GAPS.filter((gap) => !gap.partial).map((gap) => gap.signal),
    ).toEqual([]);
  });

  // The client retries a refused connection twice, with backoff (~4 s), before it gives up.
  it(
    'should name the configured Elasticsearch when it cannot be reached',
    { timeout: 20_000 },
    async () => {
      const source = openDistributedFrictionSource({
        elasticsearch: { url: 'http://127.0.0.1:9' },
        topicPrefix: '',
      });
      try {
        const read = source.corrections(
          { from: 0, to: 1 },
          { kind: 'all' },
          { add: () => undefined },
        );
        await expect(read).rejects.toThrow(DownstreamUnavailableError);
        await expect(read).rejects.toThrow(
          /^cannot reach Elasticsearch at http:\/\/127\.0\.0\.1:9: /,
        );
      } finally {
        await source.close();
      }
    },
  );
});
