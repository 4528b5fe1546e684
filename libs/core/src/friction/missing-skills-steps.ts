import { checkoutPath, type FrictionToolCall } from './config-drift-classify';

/**
 * A recipe's step: one tool call with its noise removed, so the same step in two sessions is the
 * same text. Commands are `$ <command>`; other calls are the tool and the first path it touched
 * (relative to the checkout), or the tool alone.
 */
const COMMAND_PREFIX = '$ ';

/** Values of one run that a recipe's next run has different: quoted text, ids, long numbers, temp paths. */
const QUOTED = /"[^"]*"|'[^']*'/g;
const HEX_ID = /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi;
const TEMP_PATH = /\/tmp\/[^\s'"]+/g;
const LONG_NUMBER = /\b\d{3,}\b/g;

const MAX_STEP_CHARS = 160;

/** A command as a recipe step: whitespace collapsed, run-specific values as placeholders. */
export function normaliseRecipeCommand(command: string): string {
  return command
    .replace(QUOTED, '<text>')
    .replace(TEMP_PATH, '<tmp>')
    .replace(HEX_ID, '<hex>')
    .replace(LONG_NUMBER, '<n>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_STEP_CHARS);
}

/**
 * The step a tool call is (see COMMAND_PREFIX), or null: a call without a tool name, or a failed
 * call — a recipe is work that succeeds; failing and repairing is troubleshooting, which the
 * failure and drift detectors see (a null step breaks a run).
 */
export function recipeStepOf(call: FrictionToolCall, cwd: string | null): string | null {
  if (call.failed === true) return null;
  const command = call.command?.trim() ?? '';
  if (command !== '') return `${COMMAND_PREFIX}${normaliseRecipeCommand(command)}`;
  const tool = call.toolName.trim();
  if (tool === '') return null;
  const path = call.filePaths.find((p) => p.trim() !== '');
  return path === undefined ? tool : `${tool} ${checkoutPath(path, cwd)}`.slice(0, MAX_STEP_CHARS);
}

/** Whether a step runs a command. */
export function isCommandStep(step: string): boolean {
  return step.startsWith(COMMAND_PREFIX);
}

/** A step as an instruction: "Run `npm publish`", "Edit `CHANGELOG.md`". */
export function stepInstruction(step: string): string {
  if (isCommandStep(step)) return `Run \`${step.slice(COMMAND_PREFIX.length)}\``;
  const space = step.indexOf(' ');
  return space < 0 ? `Use ${step}` : `${step.slice(0, space)} \`${step.slice(space + 1)}\``;
}

/** The step's text without the command marker (for titles). */
export function stepText(step: string): string {
  return isCommandStep(step) ? step.slice(COMMAND_PREFIX.length) : step;
}
