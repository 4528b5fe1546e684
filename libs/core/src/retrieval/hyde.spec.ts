import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import { l2Norm } from '../math/vectors';
import { hydeEnsemble, hydePrompt, shouldUseHyde } from './hyde';
import { modelVector } from './model-vector';
import { EmbeddingMismatchError } from './retrieval-errors';

describe('HyDE', () => {
  it('should run only when fewer than 3 results have relevance above 0.5', () => {
    const llm = { llmConfigured: true };
    expect(shouldUseHyde([0.9, 0.8, 0.2], llm, DEFAULT_RANKING_CONFIG)).toBe(true);
    expect(shouldUseHyde([0.9, 0.8, 0.51], llm, DEFAULT_RANKING_CONFIG)).toBe(false);
    expect(shouldUseHyde([0.9, 0.8, 0.5], llm, DEFAULT_RANKING_CONFIG)).toBe(true); // 0.5 is not above 0.5
    expect(shouldUseHyde([], llm, DEFAULT_RANKING_CONFIG)).toBe(true);
  });

  it('should never run without an LLM or when the caller disallows it', () => {
    expect(shouldUseHyde([], { llmConfigured: false }, DEFAULT_RANKING_CONFIG)).toBe(false);
    expect(shouldUseHyde([], { llmConfigured: true, allowed: false }, DEFAULT_RANKING_CONFIG)).toBe(
      false,
    );
  });

  it('should blend 0.4·query + 0.6·hypothetical and normalise (by hand)', () => {
    const ensemble = hydeEnsemble(
      modelVector('m', [2, 0]),
      modelVector('m', [0, 5]),
      DEFAULT_RANKING_CONFIG,
    );
    // normalised inputs [1,0] and [0,1] → [0.4, 0.6] / √0.52
    expect(ensemble.model).toBe('m');
    expect(ensemble.dimension).toBe(2);
    expect(ensemble.vector[0]).toBeCloseTo(0.4 / Math.sqrt(0.52), 6);
    expect(ensemble.vector[1]).toBeCloseTo(0.6 / Math.sqrt(0.52), 6);
    expect(l2Norm(ensemble.vector)).toBeCloseTo(1, 6);
  });

  it('should refuse to blend embeddings of two models', () => {
    expect(() =>
      hydeEnsemble(modelVector('m1', [1, 0]), modelVector('m2', [0, 1]), DEFAULT_RANKING_CONFIG),
    ).toThrow(EmbeddingMismatchError);
  });

  it('should ask for the memory that would answer the query', () => {
    expect(hydePrompt('  why does refresh race logout? ')).toBe(
      'Write a concise, specific developer memory that would perfectly answer: "why does refresh race logout?". Focus on concrete technical details.',
    );
  });
});
