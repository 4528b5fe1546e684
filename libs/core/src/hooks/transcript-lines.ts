import { InvalidEventError } from '../errors/engram-error';
import type { ClaudeCodeHookPayload } from './hook-payload';
import { isRecord } from './json-values';

export { isRecord };

/**
 * Line reading shared by the session-log importers (Claude Code transcripts, Codex rollouts):
 * each log line is one JSON object with an ISO 8601 time; a line that is not is a LineProblem,
 * which the reader turns into a TranscriptLineError with its file and line number.
 */

/** A reason a line is skipped (becomes a TranscriptLineError with its file and line). */
export class LineProblem extends Error {}

/** A transcript line that cannot be read; skipped (and dead-lettered by the command). */
export class TranscriptLineError extends InvalidEventError {
  readonly field = null;
  readonly recordType = null;
  constructor(
    readonly file: string,
    readonly line: number,
    readonly detail: string,
    /** The raw line, for the dead-letter topic. */
    readonly raw: string,
  ) {
    super(`${file}:${line}: ${detail}`, { file, line });
  }
}

/**
 * Reads the non-blank lines of `content` (numbered from `firstLine`) with `readLine`; a line it
 * rejects with a LineProblem goes to `errors`. Returns how many lines were read.
 */
export function readLogLines(
  content: string,
  file: string,
  firstLine: number,
  errors: TranscriptLineError[],
  readLine: (text: string) => void,
): number {
  let read = 0;
  content.split(/\r?\n/).forEach((text, i) => {
    if (text.trim() === '') return;
    read += 1;
    try {
      readLine(text);
    } catch (error) {
      if (!(error instanceof LineProblem)) throw error;
      errors.push(new TranscriptLineError(file, firstLine + i, error.message, text));
    }
  });
  return read;
}

/** A session as a reader gathers it: its steps and the times of its first and last lines. */
export interface TranscriptDraft extends TranscriptSource {
  steps: TranscriptStep[];
  first: number;
  last: number;
}

/** Sessions in order: by their first line's time, then by id. */
export function sessionOrder<D extends { first: number; sessionId: string }>(
  drafts: Iterable<D>,
): D[] {
  return [...drafts].sort((a, b) => a.first - b.first || a.sessionId.localeCompare(b.sessionId));
}

/**
 * A session's steps between a SessionStart at its first line and a SessionEnd at its last (the
 * logs record no end of their own: the session ends where its log stops; Claude Code's reason
 * for an end it did not see is "other").
 */
export function closedSteps(draft: TranscriptDraft): TranscriptStep[] {
  return [
    { payload: transcriptPayload(draft, 'SessionStart', { source: 'startup' }), at: draft.first },
    ...draft.steps,
    { payload: transcriptPayload(draft, 'SessionEnd', { reason: 'other' }), at: draft.last },
  ];
}

/** One hook payload a transcript implies, with its event time (epoch ms). */
export interface TranscriptStep {
  payload: ClaudeCodeHookPayload;
  at: number;
}

/** The session a log's lines belong to, as far as a hook payload needs it. */
export interface TranscriptSource {
  sessionId: string;
  /** The log file (the payload's transcript_path). */
  file: string;
  cwd: string | null;
}

/** The hook payload a log line implies for its session. */
export function transcriptPayload(
  source: TranscriptSource,
  hookEventName: string,
  fields: Partial<ClaudeCodeHookPayload>,
): ClaudeCodeHookPayload {
  return {
    session_id: source.sessionId,
    hook_event_name: hookEventName,
    transcript_path: source.file,
    ...(source.cwd !== null && { cwd: source.cwd }),
    ...fields,
  };
}

export function parseLineObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new LineProblem(`not valid JSON (${(error as Error).message})`);
  }
  if (!isRecord(parsed)) throw new LineProblem('expected a JSON object');
  return parsed;
}

export function lineTimestamp(value: unknown): number {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(at)) {
    throw new LineProblem(`"timestamp" is missing or not an ISO 8601 time (${String(value)})`);
  }
  return at;
}

export function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** A tool call waiting for its result. */
export interface PendingToolCall {
  name: string;
  input: unknown;
  /** When it was called (epoch ms). */
  at: number;
}

/**
 * The step of a call with its result at `at`: PostToolUse, or PostToolUseFailure with the
 * failure's text (the hook mapping redacts and cuts it).
 */
export function toolResultStep(
  source: TranscriptSource,
  callId: string,
  call: PendingToolCall,
  failure: string | null,
  at: number,
  /** What the call returned, when the mapping reads it (an MCP tool's result). */
  response: unknown = {},
): TranscriptStep {
  const fields: Partial<ClaudeCodeHookPayload> = {
    tool_name: call.name,
    tool_input: call.input,
    tool_use_id: callId,
    duration_ms: Math.max(0, at - call.at),
    ...(failure === null ? { tool_response: response } : { error: failure }),
  };
  const event = failure === null ? 'PostToolUse' : 'PostToolUseFailure';
  return { payload: transcriptPayload(source, event, fields), at };
}
