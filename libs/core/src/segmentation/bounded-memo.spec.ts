import { describe, expect, it } from 'vitest';
import { BoundedMemo } from './bounded-memo';

describe('BoundedMemo', () => {
  it('should compute a key once and then return the remembered value', () => {
    const calls: string[] = [];
    const memo = new BoundedMemo(
      (key: string) => {
        calls.push(key);
        return [key.toUpperCase()];
      },
      10,
      100,
    );
    const first = memo.get('abc');
    expect(first).toEqual(['ABC']);
    expect(memo.get('abc')).toBe(first);
    expect(calls).toEqual(['abc']);
  });

  it('should never hold more than maxEntries entries', () => {
    let computed = 0;
    const memo = new BoundedMemo(
      (key: string) => {
        computed += 1;
        return key.length;
      },
      3,
      100,
    );
    for (let i = 0; i < 1_000; i += 1) {
      expect(memo.get(`key-${i}`)).toBe(`key-${i}`.length);
      expect(memo.size).toBeLessThanOrEqual(3);
    }
    expect(computed).toBe(1_000);
    // Emptied when full: the newest key stays remembered.
    memo.get('key-999');
    expect(computed).toBe(1_000);
  });

  it('should compute keys longer than maxKeyLength every time without remembering them', () => {
    let computed = 0;
    const memo = new BoundedMemo(
      (key: string) => {
        computed += 1;
        return key.length;
      },
      10,
      4,
    );
    expect(memo.get('long key')).toBe(8);
    expect(memo.get('long key')).toBe(8);
    expect(computed).toBe(2);
    expect(memo.size).toBe(0);
    expect(memo.get('four')).toBe(4);
    expect(memo.get('four')).toBe(4);
    expect(computed).toBe(3);
    expect(memo.size).toBe(1);
  });

  it('should forget everything on clear()', () => {
    const memo = new BoundedMemo((key: string) => key, 10, 10);
    memo.get('a');
    memo.clear();
    expect(memo.size).toBe(0);
  });

  it('should reject bounds that could not hold anything', () => {
    expect(() => new BoundedMemo((key: string) => key, 0, 10)).toThrow(RangeError);
    expect(() => new BoundedMemo((key: string) => key, 10, -1)).toThrow(RangeError);
  });
});
