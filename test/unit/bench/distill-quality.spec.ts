import { describe, expect, it } from 'vitest';
import { DISTILL_METHODS, runDistillQuality } from '../../bench/quality/distill';
import { syntheticEpisodes } from '../../bench/quality/distill/synthetic';
import {
  factMatched,
  holdsKey,
  scoreEpisodes,
  scoreMetrics,
} from '../../bench/quality/distill/score';

describe('distill quality: matching a memory to a labelled fact', () => {
  it('should match a key case-insensitively, by any of its alternatives', () => {
    expect(holdsKey('Use Vitest FAKE timers', 'fake timers')).toBe(true);
    expect(holdsKey('mocked Date.now', 'clock stub|Date.now')).toBe(true);
    expect(holdsKey('mocked the clock', 'clock stub|Date.now')).toBe(false);
  });

  it('should need 1 of 1, 2 of 2, 2 of 3 and 3 of 4 keys', () => {
    const fact = (keys: string[]) => ({ text: '', keys });
    expect(factMatched('a', fact(['a']))).toBe(true);
    expect(factMatched('a', fact(['a', 'b']))).toBe(false);
    expect(factMatched('a b', fact(['a', 'b', 'c']))).toBe(true);
    expect(factMatched('a b', fact(['a', 'b', 'c', 'd']))).toBe(false);
    expect(factMatched('a b d', fact(['a', 'b', 'c', 'd']))).toBe(true);
  });

  it('should score recall over facts and precision over memories, micro-averaged', () => {
    const [first, second] = syntheticEpisodes();
    const memories = new Map([
      [first, ['Sessions live in Redis, not Postgres, for the TTL', 'ok']],
      [second, []],
    ]);
    const score = scoreEpisodes([first, second], (e) => memories.get(e) ?? []);
    expect(score).toEqual({
      episodes: 2,
      facts: 2,
      factsKept: 1,
      memories: 2,
      memoriesMatching: 1,
    });
    expect(scoreMetrics(score)).toEqual({
      'fact recall': 0.5,
      precision: 0.5,
      'memories/episode': 1,
    });
  });
});

describe('distill quality: the section', () => {
  it('should give every dataset and "all" a row per method, baselines marked', async () => {
    const section = await runDistillQuality({
      datasetsDir: '/nonexistent',
      workDir: '/tmp',
      quick: true,
      log: () => undefined,
    });
    expect(section.area).toBe('distill');
    expect(section.notes[0]).toMatch(/graph-monitor skipped/);
    const datasets = [...new Set(section.rows.map((row) => row.dataset))];
    expect(datasets).toEqual(['demo', 'synthetic', 'all']);
    expect(section.rows).toHaveLength(datasets.length * DISTILL_METHODS.length);
    for (const row of section.rows) {
      expect(Object.keys(row.metrics)).toEqual(['fact recall', 'precision', 'memories/episode']);
      expect(row.baseline).toBe(row.method !== 'engram extractive');
    }
  });

  it('should keep more of the labelled facts, with less noise, than storing every user prompt', async () => {
    const section = await runDistillQuality({
      datasetsDir: '/nonexistent',
      workDir: '/tmp',
      quick: true,
      log: () => undefined,
    });
    const all = (method: string) =>
      section.rows.find((row) => row.dataset === 'all' && row.method === method)!.metrics;
    const engram = all('engram extractive');
    const prompts = all('every user prompt');
    expect(engram['fact recall']).toBeGreaterThanOrEqual(prompts['fact recall']);
    expect(engram.precision).toBeGreaterThan(prompts.precision);
  });
});
