import { describe, expect, it } from 'vitest';
import { chunkBySize } from './message-chunks';

describe('chunkBySize', () => {
  it('should split messages into sends under the byte budget, keeping their order', () => {
    const messages = Array.from({ length: 10 }, (_, i) => ({
      key: `k${i}`,
      value: Buffer.alloc(300),
    }));
    const chunks = chunkBySize(messages, 1_000);
    expect(chunks.map((c) => c.length)).toEqual([2, 2, 2, 2, 2]);
    expect(chunks.flat()).toEqual(messages);
  });

  it('should send an oversized message alone and count tombstones as small', () => {
    const chunks = chunkBySize(
      [
        { key: 'a', value: Buffer.alloc(5_000) },
        { key: 'b', value: null },
        { key: 'c', value: 'x' },
      ],
      1_000,
    );
    expect(chunks.map((c) => c.map((m) => m.key))).toEqual([['a'], ['b', 'c']]);
  });
});
