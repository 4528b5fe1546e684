import { describe, expect, it } from 'vitest';
import { v5 as uuidv5 } from 'uuid';
import { ENGRAM_ID_NAMESPACE, uuidV5 } from './deterministic-id';
import { uuidV5Of } from './sha1-uuid-v5';

describe('uuidV5Of', () => {
  const engramUuidV5 = uuidV5Of(ENGRAM_ID_NAMESPACE);

  it('should equal uuidV5 and the uuid package on ASCII and multi-byte names', () => {
    const names = [
      '',
      'session-1:1',
      'bench-session-1999:100',
      '823ff52a-f6bf-5227-83b0-91093b1e729d:42',
      '823ff52a-f6bf-5227-83b0-91093b1e729d:thread:7',
      'ü/ß:é',
      '→ 日本語 😀',
      '\u0000\u007f\u0080\u07ff\u0800\uffff',
    ];
    for (const name of names) {
      expect(engramUuidV5(name)).toBe(uuidV5(name));
      expect(engramUuidV5(name)).toBe(uuidv5(name, ENGRAM_ID_NAMESPACE));
    }
  });

  it('should encode lone surrogates as uuidV5 does (U+FFFD; the uuid package rejects them)', () => {
    for (const name of [
      '\ud800 lone high surrogate',
      'lone low surrogate \udc00',
      '\udc00\ud800',
    ]) {
      expect(engramUuidV5(name)).toBe(uuidV5(name));
    }
  });

  it('should be right at every length around the block and padding boundaries', () => {
    // 16 namespace bytes + the name: 55/56 bytes is where the padding needs a second block.
    for (let length = 0; length <= 300; length += 1) {
      const ascii = 'abcdefghij'.repeat(31).slice(0, length);
      expect(engramUuidV5(ascii)).toBe(uuidV5(ascii));
      const wide = 'é'.repeat(length);
      expect(engramUuidV5(wide)).toBe(uuidV5(wide));
    }
  });

  it('should handle names longer than its scratch buffer, and shorter ones after them', () => {
    const long = 'x/'.repeat(50_000);
    expect(engramUuidV5(long)).toBe(uuidV5(long));
    expect(engramUuidV5('after')).toBe(uuidV5('after'));
  });

  it('should work for any namespace', () => {
    const namespace = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'; // RFC 4122's DNS namespace
    expect(uuidV5Of(namespace)('www.example.com')).toBe(uuidv5('www.example.com', namespace));
    expect(uuidV5Of(namespace)('www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('should reject a namespace that is not a uuid', () => {
    expect(() => uuidV5Of('not-a-uuid')).toThrow(/not a uuid/);
  });
});
