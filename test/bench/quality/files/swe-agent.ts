/**
 * SWE-agent trajectories (`../shared/datasets/swe-agent-trajectories/*.traj`, README there) as
 * bench sessions. Each step's `action` is a command: `open PATH [LINE]` reads a file, `create
 * PATH` writes one, `edit …` / `insert …` change the file open at that point (`state.open_file`,
 * absolute), `find_file`, `search_*`, `ls`, `python …`, `submit` touch no file. Paths are made
 * relative to the step's `working_dir` (the repository root). The trajectories carry no times:
 * session i starts at T0 + i hours, each step 10 s after the previous one. A trajectory with only
 * `history` (function calling) is read from its assistant messages' `tool_calls`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { BenchCall, BenchSession } from './sessions';

const T0 = Date.UTC(2024, 0, 1);
const STEP_MS = 10_000;

/** Commands that read or write a file named in their arguments. */
const NAMED_FILE = new Set(['open', 'create']);
/** Commands that change the open file. */
const OPEN_FILE_EDITS = new Set(['edit', 'insert', 'append', 'str_replace', 'undo_edit']);

interface Step {
  action: string;
  observation: string;
  openFile: string | null;
  workingDir: string | null;
}

/** The repository a trajectory works on, from its file name (`/testbed` says nothing). */
export function projectOfTrajectory(fileName: string): { projectId: string; queried: boolean } {
  const name = fileName.replace(/\.traj$/, '');
  const ctf = /ctf__([^_]+(?:_[^_]+)*)__(.+)$/.exec(name);
  if (ctf) return { projectId: `ctf/${ctf[2]}`, queried: false };
  if (/marshmallow-code__marshmallow/.test(name)) {
    return { projectId: 'marshmallow-code/marshmallow', queried: true };
  }
  if (/pydicom__pydicom/.test(name)) return { projectId: 'pydicom/pydicom', queried: true };
  if (/test-repo|function_calling_simple/.test(name)) {
    return { projectId: 'swe-agent/test-repo', queried: true };
  }
  if (/humanevalfix/.test(name)) return { projectId: 'humanevalfix-python', queried: true };
  return { projectId: name, queried: true };
}

function stateOf(raw: unknown): { openFile: string | null; workingDir: string | null } {
  let state = raw;
  if (typeof state === 'string') {
    try {
      state = JSON.parse(state);
    } catch {
      state = {};
    }
  }
  const record = (state ?? {}) as Record<string, unknown>;
  const open = typeof record.open_file === 'string' ? record.open_file : null;
  return {
    openFile: open === null || open === 'n/a' ? null : open,
    workingDir: typeof record.working_dir === 'string' ? record.working_dir : null,
  };
}

/** Splits a command line into words, honouring simple single and double quotes. */
export function commandWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let match = pattern.exec(line); match !== null; match = pattern.exec(line)) {
    words.push(match[1] ?? match[2] ?? match[3]);
  }
  return words;
}

/** A path as the project sees it: relative to the working dir, normalised; null outside it. */
export function relativePath(path: string, workingDir: string | null): string | null {
  const root = workingDir ?? '/';
  const absolute = path.startsWith('/') ? posix.normalize(path) : posix.join(root, path);
  const relative = posix.relative(root, absolute);
  if (relative === '' || relative.startsWith('..') || posix.isAbsolute(relative)) return null;
  return relative;
}

const FAILED = /not found|does not exist|no such file/i;

/** One step as a tool call: which files it reads or edits. */
export function callOfStep(
  step: Step,
  previousOpenFile: string | null,
): Omit<BenchCall, 'step' | 'at'> {
  const firstLine = step.action.trim().split('\n')[0] ?? '';
  const words = commandWords(firstLine);
  const command = words[0] ?? '';
  let files: string[] = [];
  if (NAMED_FILE.has(command) && words[1] !== undefined) {
    const path = relativePath(words[1], step.workingDir);
    files = path === null ? [] : [path];
  } else if (OPEN_FILE_EDITS.has(command)) {
    // `edit 2:2 other.py` names its file; otherwise the file open before the edit.
    const named = words.slice(1).find((w) => /\.[A-Za-z0-9]+$/.test(w) && !/^\d+:\d+$/.test(w));
    const target = named ?? previousOpenFile ?? step.openFile;
    const path = target === null ? null : relativePath(target, step.workingDir);
    files = path === null ? [] : [path];
  }
  const touches = files.length > 0;
  const failed = touches && FAILED.test(step.observation.split('\n')[0] ?? '');
  return {
    promptId: 1,
    toolName: command || 'unknown',
    filePaths: files,
    touches: touches && !failed,
    outcome: failed ? 'error' : 'ok',
  };
}

function stepsOf(trajectory: Record<string, unknown>): Step[] {
  const steps = trajectory.trajectory as Record<string, unknown>[] | undefined;
  if (Array.isArray(steps) && steps.length > 0) {
    return steps.map((step) => ({
      action: typeof step.action === 'string' ? step.action : '',
      observation: typeof step.observation === 'string' ? step.observation : '',
      ...stateOf(step.state),
    }));
  }
  // Function calling, history only: each tool call's name and arguments as a command line.
  const history = (trajectory.history ?? []) as Record<string, unknown>[];
  const out: Step[] = [];
  for (const message of history) {
    const calls = (message.tool_calls ?? []) as {
      function?: { name?: string; arguments?: string };
    }[];
    for (const call of calls) {
      const name = call.function?.name ?? '';
      let args: Record<string, unknown>;
      try {
        args = JSON.parse(call.function?.arguments ?? '{}') as Record<string, unknown>;
      } catch {
        args = {};
      }
      const path = args.path ?? args.file_name ?? args.filename;
      const action = typeof path === 'string' && NAMED_FILE.has(name) ? `${name} ${path}` : name;
      out.push({ action, observation: '', openFile: null, workingDir: null });
    }
  }
  // No state: the open file is the last one opened or created.
  let open: string | null = null;
  for (const step of out) {
    const words = commandWords(step.action);
    step.openFile = open;
    if (NAMED_FILE.has(words[0]) && words[1] !== undefined) open = `/${words[1]}`;
    step.workingDir = '/';
  }
  return out;
}

export function readSweAgentSessions(dir: string): BenchSession[] {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.traj'))
    .sort();
  return files.map((name, index) => {
    const trajectory = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown>;
    const { projectId, queried } = projectOfTrajectory(name);
    const steps = stepsOf(trajectory);
    const start = T0 + index * 3_600_000;
    const calls: BenchCall[] = [];
    let previousOpen: string | null = null;
    steps.forEach((step, i) => {
      calls.push({ ...callOfStep(step, previousOpen), step: i, at: start + i * STEP_MS });
      previousOpen = step.openFile ?? previousOpen;
    });
    return {
      dataset: 'swe-agent',
      projectId,
      sessionId: `swe-agent:${name.replace(/\.traj$/, '')}`,
      source: name,
      queried,
      calls,
    };
  });
}
