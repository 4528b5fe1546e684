import { InvalidEventError } from '../errors/engram-error';
import { isRecord } from './json-values';

/** A Claude Code hook payload (documented fields; anything else is ignored). */
export interface ClaudeCodeHookPayload {
  session_id: string;
  hook_event_name: string;
  transcript_path?: string;
  cwd?: string;
  permission_mode?: string;
  agent_id?: string;
  agent_type?: string;
  source?: string;
  prompt?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_response?: unknown;
  tool_use_id?: string;
  error?: string;
  is_interrupt?: boolean;
  trigger?: string;
  custom_instructions?: string;
  reason?: string;
  stop_hook_active?: boolean;
  model?: string;
  /** Newer Claude Code versions report the tool's run time. */
  duration_ms?: number;
}

/** A payload that cannot be read as a hook event; the message names the field. */
export class HookPayloadError extends InvalidEventError {}

/**
 * Parses stdin: a JSON object with a non-empty `session_id` and `hook_event_name`. Throws
 * HookPayloadError (the hook then publishes nothing and still exits 0).
 */
export function parseClaudeCodeHookPayload(text: string): ClaudeCodeHookPayload {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HookPayloadError(`hook input is not JSON (${(error as Error).message})`);
  }
  if (!isRecord(parsed)) throw new HookPayloadError('hook input must be a JSON object');
  for (const field of ['session_id', 'hook_event_name'] as const) {
    const value = parsed[field];
    if (typeof value !== 'string' || value.trim() === '') {
      throw new HookPayloadError(`hook input: ${field} is missing or not a non-empty string`);
    }
  }
  for (const field of ['cwd', 'prompt', 'tool_name', 'tool_use_id', 'source', 'reason']) {
    const value = parsed[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw new HookPayloadError(`hook input: ${field} must be a string`);
    }
  }
  return parsed as unknown as ClaudeCodeHookPayload;
}
