import { describe, expect, it } from 'vitest';
import { benchDistill, formatDistillBench } from './bench-distill';

describe('engram bench distill', () => {
  it('should distil every episode close of the recorded sessions and report the rate', () => {
    // A debugging session closes 3 episodes, a compacted one 1: 4 windows per pair.
    const result = benchDistill(4);
    expect(result).toMatchObject({ benchmark: 'distill', sessions: 4, episodes: 8 });
    expect(result.memories).toBeGreaterThan(result.episodes);
    expect(result.episodesPerSecond).toBeGreaterThan(0);
    expect(formatDistillBench(result)).toMatch(/episodes\/s/);
  });
});
