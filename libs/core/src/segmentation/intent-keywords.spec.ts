import { describe, expect, it } from 'vitest';
import { intentKeywords, jaccard, wordCount } from './intent-keywords';

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
});
