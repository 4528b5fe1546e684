import { describe, expect, it } from 'vitest';
import {
  intentKeywords,
  isRegExpSpace,
  jaccard,
  jaccardOfUnique,
  keywordsOfToken,
  wordCount,
} from './intent-keywords';

describe('intentKeywords', () => {
  it('should lower-case, drop stop words and short tokens, and stem', () => {
    expect(intentKeywords('Please add the cargo test failures to the workspace')).toEqual([
      'add',
      'cargo',
      'test',
      'failur',
      'workspac',
    ]);
  });

  it('should split camelCase, snake_case and kebab-case identifiers', () => {
    expect(intentKeywords('rename parseHTTPResponse_body and retry-loop')).toEqual(
      expect.arrayContaining(['renam', 'pars', 'http', 'respons', 'bodi', 'retri', 'loop']),
    );
  });

  it('should split file paths into parts and keep the base name whole', () => {
    const keywords = intentKeywords('fix the race in (src/auth/tokenRefresh.ts), see README.md');
    expect(keywords).toEqual(
      expect.arrayContaining(['tokenrefresh.ts', 'readme.md', 'src', 'auth', 'token', 'refresh']),
    );
  });

  it('should give terse continuations no keywords', () => {
    expect(intentKeywords('5,6')).toEqual([]);
    expect(intentKeywords('ok, yes please')).toEqual([]);
  });

  it('should split on exactly the whitespace of split(/\\s+/) and keep first-seen order', () => {
    // The keywords of the tokens of text.split(/\s+/), in order, without repeats.
    const reference = (text: string): string[] => [
      ...new Set(text.split(/\s+/).flatMap((token) => (token === '' ? [] : intentKeywords(token)))),
    ];
    const texts = [
      '',
      '   ',
      '  leading and trailing spaces  ',
      'tabs\tnewlines\ncarriage\r\nreturns\vvertical\fform feeds',
      'no\u00a0break\u1680ogham\u2000en\u200ahair\u2028line\u2029para\u202fnarrow\u205fmath\u3000ideographic\ufeffbom',
      'zero\u200bwidth spaces\u180emongolian are not whitespace',
      'refactor the parser; refactor the parser again, then REFACTOR parsers',
      'emoji 🚀 launches rockets 🚀🚀 and ünïcödé wörds',
      'fix src/auth/refresh.ts and src/auth/refresh.ts, then lib/refresh.ts',
      `${'averyveryverylongidentifier'.repeat(4)}Suffix ${'x'.repeat(100)} ok`,
      // More distinct keywords than the linear-scan dedupe handles before it switches to a Set.
      Array.from(
        { length: 120 },
        (_, i) =>
          `keyword${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}x alpha${i % 7}beta`,
      ).join(' '),
    ];
    for (const text of texts) expect(intentKeywords(text)).toEqual(reference(text));
  });

  it('should find no keywords in a token of one or two characters (it skips looking)', () => {
    // Printable ASCII plus characters whose lower case is ASCII or longer (K Kelvin, İ).
    const alphabet = [
      ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)),
      '\u212a',
      '\u0130',
      'ß',
      'é',
    ];
    for (const first of alphabet) {
      expect(keywordsOfToken(first)).toEqual([]);
      for (const second of alphabet) expect(keywordsOfToken(first + second)).toEqual([]);
    }
    expect(keywordsOfToken('api')).toEqual(['api']);
  });

  it('should return a fresh array on every call (memoised token keywords are shared)', () => {
    const first = intentKeywords('rename the parseHTTPResponse helper in src/http/client.ts');
    first.push('mutated');
    first.length = 1;
    expect(intentKeywords('rename the parseHTTPResponse helper in src/http/client.ts')).toEqual([
      'renam',
      'pars',
      'http',
      'respons',
      'helper',
      'client.ts',
      'src',
      'client',
    ]);
  });

  it('should handle a long unbroken input in linear time', () => {
    const long = `${'a.'.repeat(200_000)}b ${'x/'.repeat(200_000)}`;
    expect(intentKeywords(long).length).toBeLessThan(10);
  });
});

describe('jaccard', () => {
  it('should be |a ∩ b| / |a ∪ b|, and 0 for two empty sets', () => {
    expect(jaccard(['a', 'b', 'c'], ['b', 'c', 'd'])).toBe(0.5);
    expect(jaccard([], [])).toBe(0);
    expect(jaccard(['a'], [])).toBe(0);
    expect(jaccard(new Set(['x']), ['x'])).toBe(1);
  });
});

describe('wordCount', () => {
  it('should count whitespace-separated words', () => {
    expect(wordCount('  ok   push ')).toBe(2);
    expect(wordCount('')).toBe(0);
  });

  it('should stop counting at stopAt', () => {
    const text = 'one two three four five six seven';
    for (const stopAt of [1, 3, 5, 7, 8, 100]) {
      expect(wordCount(text, stopAt)).toBe(Math.min(wordCount(text), stopAt));
    }
    expect(wordCount('   ', 5)).toBe(0);
  });
});

describe('isRegExpSpace', () => {
  it('should agree with /\\s/ on every UTF-16 code unit', () => {
    const mismatches: number[] = [];
    for (let code = 0; code <= 0xffff; code += 1) {
      if (isRegExpSpace(code) !== /\s/.test(String.fromCharCode(code))) mismatches.push(code);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('jaccardOfUnique', () => {
  it('should equal jaccard() on small and large bags', () => {
    const bag = Array.from({ length: 100 }, (_, i) => `k${i}`);
    for (const [a, b] of [
      [[], []],
      [['a'], []],
      [
        ['a', 'b', 'c'],
        ['b', 'c', 'd'],
      ],
      [bag.slice(0, 10), bag],
      [bag.slice(50), bag.slice(0, 70)],
    ] as const) {
      expect(jaccardOfUnique(a, b)).toBe(jaccard(a, b));
      expect(jaccardOfUnique(b, a)).toBe(jaccard(a, b));
    }
  });
});
