import { idOf } from '../ids/deterministic-id';
import {
  dayCounts,
  frictionConfidence,
  type FailureGroupMeasures,
  frictionCost,
  isoDate,
} from './friction-findings';
import type { FrictionSettings } from './friction-settings';
import type { FrictionDayCount, FrictionFinding } from './friction-types';
import { isCommandStep, stepInstruction, stepText } from './missing-skills-steps';

/**
 * One recipe of one project over the window: the same ordered sequence of consecutive tool
 * calls (recipeStepOf, within one user turn), grouped by the adapter. `occurrences` counts the
 * times it was done; the measures sum its steps; the event sample holds each occurrence's last
 * step.
 */
export interface RecipeRow extends FailureGroupMeasures {
  tenantId: string;
  projectId: string;
  steps: string[];
  /** Times done per UTC day (`YYYY-MM-DD`), for the timeline; absent: not counted. */
  days?: Record<string, number>;
}

/**
 * A longer recipe explains a shorter one inside it when it was done in at least this share of
 * the shorter one's sessions (its three-step windows are the same work, not three recipes).
 */
const EXPLAINED_SHARE = 0.8;

/**
 * Missing skills: a multi-step recipe done by hand again and again (seed 001 phase 4: "propose
 * new skill creation") — the same ordered sequence of `minRecipeSteps`..`maxRecipeSteps`
 * consecutive tool calls, at least `minRecipeCommands` of them commands and no call repeated
 * right after itself (that is a retry), in at least `minRecipeSessions` sessions of a project. A recipe inside a longer one done about as often
 * is that longer one, not a recipe of its own. The proposal is a new skill (`SKILL.md`) with
 * the steps in order.
 */
export function detectMissingSkills(
  rows: readonly RecipeRow[],
  settings: FrictionSettings,
): FrictionFinding[] {
  return handRecipes(rows, settings).map((recipe) => skillFinding(recipe, settings));
}

/** The reported recipes' runs per day (the "friction over time" chart). */
export function missingSkillTimeline(
  rows: readonly RecipeRow[],
  settings: FrictionSettings,
): FrictionDayCount[] {
  return dayCounts(handRecipes(rows, settings), 'missing-skill');
}

/** The recipes that are reported: above the thresholds, not explained by a longer one. */
function handRecipes(rows: readonly RecipeRow[], settings: FrictionSettings): RecipeRow[] {
  const recipes = rows.filter(
    (row) =>
      row.sessions >= settings.minRecipeSessions &&
      row.steps.length >= settings.minRecipeSteps &&
      row.steps.length <= settings.maxRecipeSteps &&
      row.steps.filter(isCommandStep).length >= settings.minRecipeCommands &&
      // The same call twice in a row is a retry (tool misuse), not a step of a recipe.
      row.steps.every((step, i) => i === 0 || step !== row.steps[i - 1]),
  );
  const longestFirst = [...recipes].sort(
    (a, b) => b.steps.length - a.steps.length || b.sessions - a.sessions,
  );
  const kept: RecipeRow[] = [];
  for (const recipe of longestFirst) {
    const explained = kept.some(
      (longer) =>
        longer.tenantId === recipe.tenantId &&
        longer.projectId === recipe.projectId &&
        longer.steps.length > recipe.steps.length &&
        longer.sessions >= EXPLAINED_SHARE * recipe.sessions &&
        containsRun(longer.steps, recipe.steps),
    );
    if (!explained) kept.push(recipe);
  }
  return kept;
}

/** Whether `run` occurs in `steps` as consecutive steps. */
function containsRun(steps: readonly string[], run: readonly string[]): boolean {
  for (let start = 0; start + run.length <= steps.length; start += 1) {
    if (run.every((step, i) => steps[start + i] === step)) return true;
  }
  return false;
}

function skillFinding(recipe: RecipeRow, settings: FrictionSettings): FrictionFinding {
  const name = skillName(recipe.steps);
  const chain = recipe.steps.map(stepText).join(' → ');
  const period = `${isoDate(recipe.firstAt)} – ${isoDate(recipe.lastAt)}`;
  const lines = [
    '---',
    `name: ${name}`,
    `description: The ${recipe.steps.length}-step recipe agents ran by hand in ` +
      `${recipe.sessions} sessions of ${recipe.projectId} (${chain}). Use it for that task ` +
      'instead of running the steps one by one.',
    '---',
    '',
    `# ${name}`,
    '',
    `Done by hand ${recipe.occurrences} times in ${recipe.sessions} sessions (${period}). ` +
      'Run the steps in this order and stop at the first failure (`<text>`, `<hex>`, `<n>`: ' +
      'the values of this run):',
    '',
    ...recipe.steps.map((step, i) => `${i + 1}. ${stepInstruction(step)}`),
    '',
  ];
  return {
    kind: 'missing-skill',
    key: idOf('friction', 'missing-skill', recipe.tenantId, recipe.projectId, ...recipe.steps),
    subject: null,
    alsoSeenAs: [],
    tenantId: recipe.tenantId,
    projectIds: [recipe.projectId],
    title: `Recipe done by hand in ${recipe.sessions} sessions: ${chain}`,
    summary:
      `The same ${recipe.steps.length} steps (${chain}) were run by hand ${recipe.occurrences} ` +
      `times in ${recipe.sessions} sessions (${period}): a skill \`${name}\` would do them in one.`,
    sessions: recipe.sessions,
    firstAt: recipe.firstAt,
    lastAt: recipe.lastAt,
    cost: frictionCost(recipe, settings),
    evidence: { sessionIds: recipe.sessionIds, eventIds: recipe.eventIds, memoryIds: [] },
    agentIds: recipe.agentIds,
    proposedLines: lines,
    memoryId: null,
    skill: { name, lines },
    confidence: frictionConfidence(recipe.sessions, settings.minRecipeSessions, 0.5),
  };
}

/**
 * A skill's directory name from its last command: the first three words that are neither flags
 * nor placeholders (`kubectl rollout status deployment/app` → `kubectl-rollout-status`).
 */
export function skillName(steps: readonly string[]): string {
  const commands = steps.filter(isCommandStep);
  const last = commands[commands.length - 1] ?? steps[steps.length - 1] ?? 'recipe';
  const words = stepText(last)
    .split(' ')
    .filter((word) => !word.startsWith('-') && !word.startsWith('<'))
    .slice(0, 3)
    .map((word) =>
      word
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, ''),
    )
    .filter((word) => word !== '');
  return words.length === 0 ? 'recipe' : words.join('-');
}
