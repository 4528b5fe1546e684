/**
 * A Codex rollout's function calls as the hook mapping's tool calls: shell commands become Bash
 * calls, apply_patch (direct or through the shell) an Edit of the files its headers name, and an
 * output's failure is read from its exit code or its words.
 */
import { hookResponseFailure } from './hook-tool-input';
import { isRecord, nonEmpty, type PendingToolCall } from './transcript-lines';

/** Characters of a prompt or a tool output that are read (the rest is cut before any work). */
export const MAX_CODEX_TEXT = 65_536;
/** Files taken from one patch's headers. */
export const MAX_PATCH_FILES = 200;

/** Function tools that run a shell command. */
const SHELL_TOOLS = new Set([
  'shell',
  'container.exec',
  'local_shell',
  'shell_command',
  'exec_command',
]);
/** The tool name a shell call gets (the hook mapping reads `command` of Bash calls). */
const SHELL_TOOL_NAME = 'Bash';
/** The tool name an apply_patch gets: a file edit. */
export const PATCH_TOOL_NAME = 'Edit';
/** Outputs that report a failure in words, not with an exit code. */
const FAILED_OUTPUT =
  /^\s*(apply_patch verification failed|execution error|failed to parse function arguments|unsupported call|unknown tool|aborted|exec command rejected|error:)/i;

export interface PendingCall extends PendingToolCall {
  files?: string[];
}

export function toolCall(
  item: Record<string, unknown>,
  cwd: string | null,
): Omit<PendingCall, 'at'> {
  const name =
    nonEmpty(item.name) ?? (item.type === 'local_shell_call' ? 'local_shell' : 'unknown');
  const input: unknown =
    item.type === 'local_shell_call'
      ? item.action
      : item.type === 'custom_tool_call'
        ? { input: item.input }
        : parseArguments(item.arguments);
  const args = isRecord(input) ? input : {};
  if (name === 'apply_patch') {
    const patch = typeof args.input === 'string' ? args.input : '';
    return patchCall(patch, cwd);
  }
  if (!SHELL_TOOLS.has(name)) return { name, input };
  const command = commandText(args.command ?? args.cmd);
  const workdir = nonEmpty(args.workdir) ?? nonEmpty(args.working_directory) ?? cwd;
  // Models also apply patches through the shell: `apply_patch '*** Begin Patch…'`.
  const patch = command === null ? null : shellPatch(args.command ?? args.cmd);
  if (patch !== null) return patchCall(patch, workdir);
  return {
    name: SHELL_TOOL_NAME,
    input: { ...args, command: command ?? '', ...(workdir !== null && { workdir }) },
  };
}

function patchCall(patch: string, cwd: string | null): Omit<PendingCall, 'at'> {
  const files = patchFiles(patch).map((file) => absoluteIn(cwd, file));
  return {
    name: PATCH_TOOL_NAME,
    input: { ...(files[0] !== undefined && { file_path: files[0] }), patch },
    files,
  };
}

/** The files a patch's headers name (Add / Update / Delete File, Move to), in order, once. */
export function patchFiles(patch: string): string[] {
  const files: string[] = [];
  for (const match of patch.matchAll(/^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm)) {
    const file = match[1].trim();
    if (file !== '' && !files.includes(file)) files.push(file);
    if (files.length >= MAX_PATCH_FILES) break;
  }
  return files;
}

/** A shell command as one line of text: `bash -lc SCRIPT` is SCRIPT, an argv is joined. */
function commandText(command: unknown): string | null {
  if (typeof command === 'string') return command;
  if (!Array.isArray(command) || !command.every((part) => typeof part === 'string')) return null;
  const argv = command;
  if (argv.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(argv[0]) && /^-l?c$/.test(argv[1])) {
    return argv[2];
  }
  return argv.map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : quoted(part))).join(' ');
}

/** The patch of a shell call that runs apply_patch, or null. */
function shellPatch(command: unknown): string | null {
  if (Array.isArray(command) && /^(apply_patch|applypatch)$/.test(String(command[0]))) {
    return typeof command[1] === 'string' ? command[1] : null;
  }
  const script = commandText(command);
  if (script === null || !/^\s*(apply_patch|applypatch)\b/.test(script)) return null;
  const begin = script.indexOf('*** Begin Patch');
  return begin < 0 ? null : script.slice(begin);
}

/** The failure a call's output reports, redacted and cut by the hook mapping; null for success. */
export function outputFailure(output: unknown): string | null {
  if (isRecord(output)) {
    // {content, success}: the payload's own shape where a version writes it as an object.
    const content = outputText(output.content);
    return output.success === false
      ? hookResponseFailure({ success: false, error: content || 'tool call failed' })
      : null;
  }
  const text = outputText(output);
  if (text.startsWith('{')) {
    const structured = parseStructured(text);
    if (structured !== null) return hookResponseFailure(structured);
    // Longer than the cut: the metadata (serialised last) is at the end of the whole output.
    const tail = typeof output === 'string' ? output.slice(-200) : '';
    const cut = /"metadata":\{"exit_code":(-?\d+)/.exec(tail);
    if (cut !== null) return hookResponseFailure({ exit_code: Number(cut[1]), stdout: text });
  }
  const code = /^(?:Exit code:|Process exited with code) (-?\d+)\s*$/m.exec(text);
  if (code !== null) {
    const body = text.indexOf('\nOutput:\n');
    const stdout = body < 0 ? text : text.slice(body + '\nOutput:\n'.length);
    return hookResponseFailure({ exit_code: Number(code[1]), stdout: stdout || text });
  }
  return FAILED_OUTPUT.test(text) ? hookResponseFailure({ error: text }) : null;
}

/** `{output, metadata: {exit_code}}` (the shell tool's structured output) as a hook response. */
function parseStructured(text: string): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(parsed) || !isRecord(parsed.metadata)) return null;
  const exitCode = parsed.metadata.exit_code;
  if (typeof exitCode !== 'number') return null;
  return { exit_code: exitCode, stdout: typeof parsed.output === 'string' ? parsed.output : '' };
}

/** An output as text (a string, or content items with text), cut to MAX_CODEX_TEXT. */
function outputText(output: unknown): string {
  const text =
    typeof output === 'string'
      ? output
      : Array.isArray(output)
        ? output
            .filter(isRecord)
            .map((item) => (typeof item.text === 'string' ? item.text : ''))
            .join('\n')
        : '';
  return text.slice(0, MAX_CODEX_TEXT);
}

function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (a model's malformed call): kept as text, cut by the hook mapping.
    return { arguments: text };
  }
}

/** A path from a patch, made absolute against the directory the call ran in. */
function absoluteIn(cwd: string | null, path: string): string {
  if (cwd === null || path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return path;
  return `${cwd.replace(/[\\/]+$/, '')}/${path}`;
}

function quoted(part: string): string {
  return `'${part.replace(/'/g, `'\\''`)}'`;
}

/** `rollout-2026-11-20T09-00-00-<uuid>.jsonl` → the uuid; else the file's name. */
