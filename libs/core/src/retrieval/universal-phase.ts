/**
 * The six universal phases (seed 002 §3). Retrieval only ever sees these: a methodology plugin
 * translates its own phase names first, so the phase table and the ranking never depend on how a
 * team organises its work.
 */
export const UNIVERSAL_PHASES = [
  'define',
  'implement',
  'validate',
  'refine',
  'explore',
  'reflect',
] as const;
export type UniversalPhase = (typeof UNIVERSAL_PHASES)[number];

/** Open-ended work with no known phase is exploration (seed 002: "all: open-ended sessions"). */
export const FALLBACK_PHASE: UniversalPhase = 'explore';

const PHASE_SET: ReadonlySet<string> = new Set(UNIVERSAL_PHASES);

export function isUniversalPhase(value: string): value is UniversalPhase {
  return PHASE_SET.has(value);
}
