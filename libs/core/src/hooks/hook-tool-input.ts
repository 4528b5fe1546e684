/**
 * What a Claude Code hook payload's tool fields say: the call's own event id, the files it names,
 * its command, its arguments and its failure — each redacted and capped before it can leave the
 * process (SPEC §11).
 */
import { idOf } from '../ids/deterministic-id';
import { normaliseProjectPath, ProjectPathError } from '../observation/project-paths';
import { capJsonText, capText, EVENT_TEXT_CAPS, redactJson, redactSecrets } from '../redaction';
import type { ClaudeCodeHookPayload } from './hook-payload';
import { isRecord } from './json-values';

/** Longest string kept inside `argsJson` (a Write's `content` can be a whole file). */
export const MAX_HOOK_ARG_CHARS = 4_000;
/** Longest error message kept. */
export const MAX_HOOK_ERROR_CHARS = 2_000;

/**
 * The eventId of a tool call that carries its own id (`tool_use_id`, which Claude Code sends on
 * PreToolUse, PostToolUse and PostToolUseFailure): uuid v5 of (session, tool_use_id). It does not
 * depend on the session's step counter, so parallel tool calls can never share an id, and a
 * re-delivery of the same call (however late) is the same event. Undefined without one (the
 * counter-based id then).
 */
export function toolCallEventId(payload: ClaudeCodeHookPayload): string | undefined {
  const own = payload.tool_use_id?.trim();
  return own ? idOf('claude-code-hook', payload.session_id, 'tool_use_id', own) : undefined;
}

/**
 * The files a tool call names, project-relative (normaliseProjectPath): Read / Edit / MultiEdit
 * / Write `file_path`, NotebookEdit `notebook_path`, Grep / Glob `path` (a search scope). Paths
 * outside the project root, or absolute paths when the root is unknown, are left out.
 */
export function hookFilePaths(
  toolName: string,
  toolInput: unknown,
  projectRoot: string | null,
): string[] {
  if (!isRecord(toolInput)) return [];
  const raw: unknown[] = [];
  switch (toolName) {
    case 'Read':
    case 'Edit':
    case 'MultiEdit':
    case 'Write':
      raw.push(toolInput.file_path);
      break;
    case 'NotebookEdit':
    case 'NotebookRead':
      raw.push(toolInput.notebook_path);
      break;
    case 'Grep':
    case 'Glob':
    case 'LS':
      raw.push(toolInput.path);
      break;
    default:
      // MCP and unknown tools: the usual argument names.
      raw.push(toolInput.file_path, toolInput.path, toolInput.filePath);
  }
  const paths: string[] = [];
  for (const value of raw) {
    if (typeof value !== 'string' || value.trim() === '') continue;
    try {
      const path = normaliseProjectPath(value, projectRoot);
      if (!paths.includes(path)) paths.push(path);
    } catch (error) {
      if (!(error instanceof ProjectPathError)) throw error;
    }
  }
  return paths;
}

export function commandOf(toolName: string, toolInput: unknown): string | null {
  if (!isRecord(toolInput) || typeof toolInput.command !== 'string') return null;
  if (toolName !== 'Bash' && !toolName.startsWith('mcp__')) return null;
  return capText(toolInput.command, EVENT_TEXT_CAPS.command, redactText);
}

/** The tool's arguments, redacted (values of secret-named keys too), long strings cut. */
export function hookArgsJson(toolInput: unknown): string {
  if (toolInput === undefined || toolInput === null) return '{}';
  const { value } = redactJson(truncateStrings(toolInput));
  // Many short strings can still add up: the whole stays under the event cap, as JSON.
  return capJsonText(JSON.stringify(value) ?? '{}', EVENT_TEXT_CAPS.argsJson);
}

function truncateStrings(value: unknown): unknown {
  if (typeof value === 'string') return capText(value, MAX_HOOK_ARG_CHARS, redactText);
  if (Array.isArray(value)) return value.map(truncateStrings);
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, truncateStrings(v)]));
  }
  return value;
}

export const redactText = (text: string): string => redactSecrets(text).text;

export function failureMessage(error: unknown, interrupted: unknown): string {
  const text = typeof error === 'string' && error.trim() !== '' ? error : null;
  const message = text ?? (interrupted === true ? 'interrupted' : 'tool call failed');
  return capText(message, MAX_HOOK_ERROR_CHARS, redactText);
}

/**
 * The failure a PostToolUse response reports, or null for success: `is_error` / `isError`,
 * `success: false`, a string `error`, `interrupted`, or a non-zero exit code (Bash shapes).
 */
export function hookResponseFailure(response: unknown): string | null {
  if (!isRecord(response)) return null;
  const exitCode = response.exit_code ?? response.exitCode;
  const failed =
    response.is_error === true ||
    response.isError === true ||
    response.success === false ||
    response.interrupted === true ||
    (typeof response.error === 'string' && response.error.trim() !== '') ||
    (typeof exitCode === 'number' && exitCode !== 0);
  if (!failed) return null;
  const detail = [response.error, response.stderr, response.content, response.stdout].find(
    (value): value is string => typeof value === 'string' && value.trim() !== '',
  );
  return failureMessage(detail, response.interrupted);
}

export function durationOf(reported: unknown, started: number | undefined, now: number): number {
  if (typeof reported === 'number' && Number.isFinite(reported) && reported >= 0) {
    return Math.round(reported);
  }
  return started === undefined ? 0 : Math.max(0, Math.round(now - started));
}
