import { FALLBACK_PHASE, isUniversalPhase, type UniversalPhase } from './universal-phase';

/**
 * The phase-resolution part of seed 002 §3's MemoryMethodologyPlugin: each methodology maps its
 * own phase names to a universal phase before anything reaches retrieval. (Work-unit resolution,
 * stage relay and work-state formatting belong to the observer and distiller, not to ranking.)
 */
export interface MethodologyPlugin {
  readonly id: string;
  readonly displayName: string;
  /** The methodology's phase names (normalised, see `normalisePhaseName`) → universal phase. */
  readonly phases: Readonly<Record<string, UniversalPhase>>;
  /**
   * Its own names first; a universal phase name passes through unchanged (callers may already
   * hold one, e.g. the gRPC enum); anything else is open-ended work: `explore`.
   */
  mapPhase(methodologyPhase: string): UniversalPhase;
}

/** "QA Review", "qa-review" and "qa_review" are one phase: lower case, `_` between words. */
export function normalisePhaseName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

function definePlugin(
  id: string,
  displayName: string,
  phases: Record<string, UniversalPhase>,
): MethodologyPlugin {
  const table = Object.freeze({ ...phases });
  return Object.freeze({
    id,
    displayName,
    phases: table,
    mapPhase(methodologyPhase: string): UniversalPhase {
      const name = normalisePhaseName(methodologyPhase);
      if (Object.hasOwn(table, name)) return table[name];
      return isUniversalPhase(name) ? name : FALLBACK_PHASE;
    },
  });
}

/** Seed 002 §3 nativePlugin, plus `retrospective` (the seed: every methodology reflects). */
export const NATIVE_PLUGIN = definePlugin('native', 'Native (spec / subtasks)', {
  planning: 'define',
  spec: 'define',
  coding: 'implement',
  qa_review: 'validate',
  qa_fix: 'refine',
  debugging: 'refine',
  insights: 'explore',
  retrospective: 'reflect',
});

/** Seed 002 §3 bmadPlugin, plus `research` → explore from the seed's phase comments. */
export const BMAD_PLUGIN = definePlugin('bmad', 'BMAD (Epic/Story)', {
  analyst: 'define',
  pm: 'define',
  architect: 'define',
  story_creation: 'define',
  dev: 'implement',
  story_development: 'implement',
  qa: 'validate',
  story_acceptance: 'validate',
  research: 'explore',
  sm: 'reflect',
  retrospective: 'reflect',
});

/**
 * Red-green-refactor (seed 002 §3 comments: red → define, green → implement, assertion →
 * validate, refactor → refine); spike and retrospective are our analogues for explore/reflect.
 */
export const TDD_PLUGIN = definePlugin('tdd', 'TDD (red / green / refactor)', {
  red: 'define',
  test_writing: 'define',
  green: 'implement',
  assertion: 'validate',
  refactor: 'refine',
  spike: 'explore',
  retrospective: 'reflect',
});

/**
 * Scrum-style ceremonies. The seed fixes only tech_debt → refine; the rest follow the universal
 * phases' descriptions (planning and story writing define, review and acceptance validate, …).
 */
export const AGILE_PLUGIN = definePlugin('agile', 'Agile (Sprint/Story)', {
  backlog_refinement: 'define',
  sprint_planning: 'define',
  story_writing: 'define',
  development: 'implement',
  in_progress: 'implement',
  code_review: 'validate',
  testing: 'validate',
  acceptance: 'validate',
  sprint_review: 'validate',
  tech_debt: 'refine',
  bug_fix: 'refine',
  spike: 'explore',
  research: 'explore',
  retrospective: 'reflect',
});

export const METHODOLOGY_PLUGINS: ReadonlyMap<string, MethodologyPlugin> = new Map(
  [NATIVE_PLUGIN, BMAD_PLUGIN, TDD_PLUGIN, AGILE_PLUGIN].map((plugin) => [plugin.id, plugin]),
);

/** The built-in plugin with this id (case-insensitive), or undefined. */
export function methodologyPlugin(id: string): MethodologyPlugin | undefined {
  return METHODOLOGY_PLUGINS.get(id.trim().toLowerCase());
}

/**
 * The universal phase for a methodology's phase name. An unknown or absent methodology cannot
 * interpret the name, so only universal names survive and the rest is `explore` — the same rule
 * as an unknown phase. A missing phase is open-ended work: `explore`.
 */
export function toUniversalPhase(
  methodology: string | null | undefined,
  phase: string | null | undefined,
): UniversalPhase {
  if (phase === null || phase === undefined || phase.trim() === '') return FALLBACK_PHASE;
  const plugin = methodology ? methodologyPlugin(methodology) : undefined;
  if (plugin) return plugin.mapPhase(phase);
  const name = normalisePhaseName(phase);
  return isUniversalPhase(name) ? name : FALLBACK_PHASE;
}
