import { idOf } from '../ids/deterministic-id';
import type { DetectorState } from './detector-state';
import { signalBase, signalIdOf, type CallContext } from './observed-call';
import { normaliseProjectPath } from './project-paths';
import type { DeadEndSignal } from './signals';

/**
 * The full-revert proxy of seed 002 §15 Q3 for dead ends: an approach is abandoned when the files
 * it edited are put back as they were — by git (`checkout`/`restore` of the files, `reset
 * --hard`, `stash`) or by edits that exactly invert the earlier ones. A partial revert (`git
 * checkout -p`, `restore --staged`, undoing only the last of several edits) is not one.
 */

/**
 * Applies an edit call to a file's edit stack; true when the file is back at the start of its
 * approach. Whole-file writes and edits whose old/new text is not visible make inversion
 * undetectable for the file until a git revert resets it.
 */
export function applyEditToStack(
  state: DetectorState,
  context: CallContext,
  filePath: string,
): boolean {
  const file = state.files[filePath];
  const pairs = context.files.length === 1 ? editPairsOf(context.call.argsJson) : null;
  if (pairs === null || file.editStack === null) {
    file.editStack = null;
    return false;
  }
  let popped = false;
  for (const [before, after] of pairs) {
    const top = file.editStack[file.editStack.length - 1];
    if (top !== undefined && top === idOf(after, before)) {
      file.editStack.pop();
      popped = true;
    } else {
      file.editStack.push(idOf(before, after));
    }
  }
  return popped && file.editStack.length === 0;
}

/** Files of the current approach that this (execute) call reverts with git. */
export function filesRevertedByCommand(state: DetectorState, context: CallContext): string[] {
  const target = gitRevertTarget(context.call.command ?? '');
  if (target === null) return [];
  const paths = [...target.paths, ...context.files].flatMap((raw) => {
    try {
      return [normaliseProjectPath(raw, state.projectRoot)];
    } catch {
      return [];
    }
  });
  const inApproach = Object.keys(state.files).filter(
    (file) => state.files[file].approachStartStep !== null,
  );
  if (target.all || paths.includes('.')) return inApproach.sort();
  return inApproach.filter((file) => paths.some((p) => file === p || file.startsWith(`${p}/`)));
}

/** The dead_end signal for reverted files; resets their approach. */
export function deadEndSignal(
  state: DetectorState,
  context: CallContext,
  revertedFiles: readonly string[],
): DeadEndSignal {
  const step = context.call.stepIndex;
  const approachFiles = Object.keys(state.files)
    .filter((file) => state.files[file].approachStartStep !== null)
    .sort();
  const start = Math.min(
    ...revertedFiles.map((file) => state.files[file].approachStartStep ?? step),
  );
  const errorsSeen = [
    ...new Set(state.recentErrors.filter((e) => e.step >= start).map((e) => e.normalisedError)),
  ].slice(0, 5);
  for (const file of revertedFiles) {
    state.files[file].approachStartStep = null;
    state.files[file].editStack = [];
  }
  const stepsSpent = step - start;
  return {
    ...signalBase(context, signalIdOf(context, 'dead_end', ...revertedFiles), [
      context.call.eventId,
    ]),
    type: 'dead_end',
    trigger:
      stepsSpent >= context.settings.deadEndMinSteps ? 'abandoned_after_steps' : 'full_revert',
    revertedFiles: [...revertedFiles].sort(),
    approachFiles,
    approachStartStep: start,
    stepsSpent,
    revertCommand: context.kind === 'execute' ? (context.call.command ?? null) : null,
    errorsSeen,
  };
}

/** `[old, new]` text pairs of an edit's arguments (Claude Code, str_replace, MultiEdit shapes). */
function editPairsOf(argsJson: string): Array<[string, string]> | null {
  let args: unknown;
  try {
    args = JSON.parse(argsJson);
  } catch {
    return null;
  }
  if (!isRecord(args)) return null;
  const list = Array.isArray(args.edits) ? (args.edits as unknown[]) : [args];
  const pairs = list.map(pairOf);
  return pairs.length > 0 && pairs.every((pair) => pair !== null) ? pairs : null;
}

function pairOf(edit: unknown): [string, string] | null {
  if (!isRecord(edit)) return null;
  for (const [oldKey, newKey] of EDIT_KEYS) {
    const before = edit[oldKey];
    const after = edit[newKey];
    if (typeof before === 'string' && typeof after === 'string') return [before, after];
  }
  return null;
}

const EDIT_KEYS: ReadonlyArray<[string, string]> = [
  ['old_string', 'new_string'],
  ['old_str', 'new_str'],
  ['oldText', 'newText'],
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface RevertTarget {
  all: boolean;
  paths: string[];
}

/** What a shell command reverts with git, or null when it reverts nothing fully. */
export function gitRevertTarget(command: string): RevertTarget | null {
  const targets = command
    .split(/&&|\|\||;|\|/)
    .map((part) => gitSubcommand(part.trim().split(/\s+/)))
    .filter((target): target is RevertTarget => target !== null);
  if (targets.length === 0) return null;
  return { all: targets.some((t) => t.all), paths: targets.flatMap((t) => t.paths) };
}

function gitSubcommand(words: string[]): RevertTarget | null {
  let i = words.indexOf('git');
  if (i < 0) return null;
  i += 1;
  while (i < words.length && words[i].startsWith('-')) i += words[i] === '-C' ? 2 : 1;
  const sub = words[i];
  const args = words.slice(i + 1);
  const options = args.filter((word) => word.startsWith('-') && word !== '--');
  const paths = args.filter((word) => !word.startsWith('-'));
  if (sub === 'reset') return options.includes('--hard') ? { all: true, paths: [] } : null;
  if (sub === 'stash') return stashTarget(args);
  if (sub !== 'checkout' && sub !== 'restore') return null;
  if (options.some((o) => o === '-p' || o === '--patch')) return null;
  const stagedOnly = options.includes('--staged') && !options.includes('--worktree');
  if (stagedOnly || paths.length === 0) return null;
  return { all: false, paths };
}

/** `git stash` / `stash push [-- paths]` revert (all or some); pop, apply, list… do not. */
function stashTarget(args: string[]): RevertTarget | null {
  if (args.length > 0 && args[0] !== 'push' && args[0] !== 'save') return null;
  const paths = args.slice(1).filter((word) => !word.startsWith('-'));
  return paths.length > 0 && args[0] === 'push' ? { all: false, paths } : { all: true, paths: [] };
}
