import { describe, expect, it } from 'vitest';
import { murmur2, partitionOfKey } from './partitioning';

describe('murmur2', () => {
  it("should give the Java client's hashes (Kafka UtilsTest.testMurmur2 cases)", () => {
    const cases: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, hash] of cases) expect(murmur2(new TextEncoder().encode(key))).toBe(hash);
  });
});

describe('partitionOfKey', () => {
  it('should map a key to a stable partition in range, bytes and text alike', () => {
    expect(partitionOfKey('foobar', 7)).toBe((-790332482 & 0x7fffffff) % 7);
    expect(partitionOfKey(new TextEncoder().encode('foobar'), 7)).toBe(partitionOfKey('foobar', 7));
    const seen = new Set(Array.from({ length: 200 }, (_, i) => partitionOfKey(`session-${i}`, 3)));
    expect([...seen].sort()).toEqual([0, 1, 2]);
  });

  it('should refuse a partition count that is not a positive integer', () => {
    expect(() => partitionOfKey('k', 0)).toThrow(RangeError);
    expect(() => partitionOfKey('k', 1.5)).toThrow(RangeError);
  });
});
