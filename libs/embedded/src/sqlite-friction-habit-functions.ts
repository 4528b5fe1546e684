import { configRepairOf, recipeStepOf, type FrictionToolCall } from '@engram/core';
import type { Database } from 'better-sqlite3';

/**
 * The core's decisions for configuration drift and missing skills as SQL functions, so the
 * queries classify each tool call where it is read: `engram_config_repair(tool, command,
 * paths)` (JSON `{kind, target}` of configRepairOf, or NULL), `engram_recipe_step(tool, command,
 * paths, failed)` (recipeStepOf) and the aggregate `engram_day_counts(at)` (JSON `{YYYY-MM-DD: n}`: at
 * most one key per day of the window). The events carry no working directory: paths are taken
 * as recorded.
 */
export function registerHabitFunctions(db: Database): void {
  const repairs = memo((tool: unknown, command: unknown, paths: unknown) => {
    const repair = configRepairOf(toolCallOf(tool, command, paths), null);
    return repair === null ? null : JSON.stringify(repair);
  });
  db.function('engram_config_repair', { deterministic: true, varargs: true }, repairs);
  const steps = memo((tool: unknown, command: unknown, paths: unknown, failed: unknown) =>
    recipeStepOf({ ...toolCallOf(tool, command, paths), failed: failed === 1 }, null),
  );
  db.function('engram_recipe_step', { deterministic: true, varargs: true }, steps);
  db.aggregate<Record<string, number>>('engram_day_counts', {
    start: () => ({}),
    step: (days: Record<string, number>, at: unknown) => {
      if (typeof at !== 'number') return days;
      const day = new Date(at).toISOString().slice(0, 10);
      days[day] = (days[day] ?? 0) + 1;
      return days;
    },
    result: (days: Record<string, number>) => JSON.stringify(days),
  });
}

/** Answers kept at most (then forgotten at once): bounds the memory the memo takes. */
const MAX_MEMO = 20_000;

/**
 * The same call (tool, command, paths) recurs thousands of times in an organisation's events:
 * classifying it once instead of per row is most of these functions' cost.
 */
function memo<A extends unknown[]>(classify: (...args: A) => string | null) {
  const answers = new Map<string, string | null>();
  return (...args: A): string | null => {
    const key = args.map((arg) => (typeof arg === 'string' ? arg : String(arg))).join('\u0000');
    const known = answers.get(key);
    if (known !== undefined) return known;
    const answer = classify(...args);
    if (answers.size >= MAX_MEMO) answers.clear();
    answers.set(key, answer);
    return answer;
  };
}

function toolCallOf(tool: unknown, command: unknown, paths: unknown): FrictionToolCall {
  return {
    toolName: typeof tool === 'string' ? tool : '',
    command: typeof command === 'string' ? command : null,
    filePaths: typeof paths === 'string' ? pathsOf(paths) : [],
  };
}

function pathsOf(json: string): string[] {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}
