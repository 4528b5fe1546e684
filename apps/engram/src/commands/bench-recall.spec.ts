import { describe, expect, it } from 'vitest';
import { DISTINCT_QUESTIONS, syntheticRecallCorpus, warmupQueries } from './bench-recall-corpus';

describe('engram bench recall --distributed warm-up queries', () => {
  const corpus = syntheticRecallCorpus(10, 8, { distinctTexts: true });
  const measured = corpus.queries.slice(0, 5);
  const spare = corpus.queries.slice(5);
  const measuredTexts = new Set(measured.map((q) => q.text));

  it('should take the spare questions as they are, then again with a round suffix', () => {
    const warmup = warmupQueries(spare, measured, 7);
    expect(warmup.map((q) => q.text)).toEqual([
      ...spare.map((q) => q.text),
      ...spare.map((q) => `${q.text} (again 1)`),
      `${spare[0].text} (again 2)`,
    ]);
    // Each keeps its question's vector: the server embeds it, the bench answers with that one.
    expect(warmup[3].vector).toBe(spare[0].vector);
    expect(new Set(warmup.map((q) => q.text)).size).toBe(7);
    expect(warmup.some((q) => measuredTexts.has(q.text))).toBe(false);
  });

  it('should suffix the measured questions from the first round when there are no spares', () => {
    const warmup = warmupQueries([], measured, 6);
    expect(warmup.map((q) => q.text)).toEqual([
      ...measured.map((q) => `${q.text} (again 1)`),
      `${measured[0].text} (again 2)`,
    ]);
    expect(warmup.some((q) => measuredTexts.has(q.text))).toBe(false);
  });

  it('should know how many distinct questions the corpus can ask', () => {
    expect(
      syntheticRecallCorpus(1, DISTINCT_QUESTIONS, { distinctTexts: true }).queries,
    ).toHaveLength(DISTINCT_QUESTIONS);
    expect(() => syntheticRecallCorpus(1, DISTINCT_QUESTIONS + 1, { distinctTexts: true })).toThrow(
      RangeError,
    );
  });
});
