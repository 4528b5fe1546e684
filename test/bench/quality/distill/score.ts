import type { LabelledEpisode, LabelledFact } from './types';

/** Share of a fact's keys a memory must hold to state it (rounded up: 1 of 1, 2 of 2, 2 of 3, 3 of 4). */
export const KEY_SHARE = 0.6;

function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\s+/g, ' ');
}

/** True when `content` holds one alternative of a key (case-insensitive substring). */
export function holdsKey(content: string, key: string): boolean {
  const text = normalise(content);
  return key.split('|').some((alternative) => text.includes(normalise(alternative.trim())));
}

/** A memory states a fact when it holds at least ⌈KEY_SHARE · keys⌉ of the fact's keys. */
export function factMatched(content: string, fact: LabelledFact): boolean {
  const needed = Math.max(1, Math.ceil(KEY_SHARE * fact.keys.length - 1e-9));
  return fact.keys.filter((key) => holdsKey(content, key)).length >= needed;
}

export interface DistillScore {
  episodes: number;
  facts: number;
  factsKept: number;
  memories: number;
  memoriesMatching: number;
}

/**
 * Fact recall: labelled facts stated by some memory of their episode. Precision: memories that
 * state some labelled fact of their episode (the rest is noise). Both micro-averaged.
 */
export function scoreEpisodes(
  episodes: readonly LabelledEpisode[],
  memoriesOf: (episode: LabelledEpisode) => readonly string[],
): DistillScore {
  const score: DistillScore = {
    episodes: 0,
    facts: 0,
    factsKept: 0,
    memories: 0,
    memoriesMatching: 0,
  };
  for (const episode of episodes) {
    const memories = memoriesOf(episode);
    score.episodes += 1;
    score.facts += episode.facts.length;
    score.factsKept += episode.facts.filter((fact) =>
      memories.some((memory) => factMatched(memory, fact)),
    ).length;
    score.memories += memories.length;
    score.memoriesMatching += memories.filter((memory) =>
      episode.facts.some((fact) => factMatched(memory, fact)),
    ).length;
  }
  return score;
}

export function scoreMetrics(score: DistillScore): Record<string, number> {
  return {
    'fact recall': score.facts === 0 ? NaN : score.factsKept / score.facts,
    precision: score.memories === 0 ? NaN : score.memoriesMatching / score.memories,
    'memories/episode': score.episodes === 0 ? NaN : score.memories / score.episodes,
  };
}
