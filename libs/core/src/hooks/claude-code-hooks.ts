import type {
  CompactionPending,
  PromptSubmitted,
  SessionEnded,
  SessionStarted,
  ToolCallObserved,
  Typed,
} from '@engram/contracts';
import { InvalidEventError } from '../errors/engram-error';
import { idOf, uuidV5 } from '../ids/deterministic-id';
import { normaliseProjectPath, ProjectPathError } from '../observation/project-paths';
import { capJsonText, capText, EVENT_TEXT_CAPS, redactJson, redactSecrets } from '../redaction';

/**
 * Claude Code hooks → Engram events (SPEC §3, issue #7). Pure: the caller reads stdin, keeps the
 * per-session state between hook processes and publishes what comes back.
 *
 * Input: the JSON object Claude Code writes to a command hook's stdin (code.claude.com/docs/en/
 * hooks, "Hook input"): the common fields `session_id`, `transcript_path`, `cwd`,
 * `hook_event_name` (`permission_mode`, `agent_id`, `agent_type` optional) and per event
 * `source` (SessionStart), `prompt` (UserPromptSubmit), `tool_name` / `tool_input` /
 * `tool_use_id` (PreToolUse), `+ tool_response` (PostToolUse), `+ error` / `is_interrupt`
 * (PostToolUseFailure), `trigger` / `custom_instructions` (PreCompact), `stop_hook_active`
 * (Stop), `reason` (SessionEnd).
 *
 * Output: the events to publish, the session state to keep, and what memory to ask for.
 * - SessionStart → SessionStarted (not after a compaction: `source: compact` is the same session);
 * - UserPromptSubmit → PromptSubmitted, promptId = the session's prompt counter + 1;
 * - PreToolUse → nothing (its start time is kept for the call's durationMs; Read/Edit/… ask for
 *   the file's memories);
 * - PostToolUse / PostToolUseFailure → ToolCallObserved (stepIndex = the session's tool counter);
 * - PreCompact → CompactionPending; SessionEnd → SessionEnded; Stop and the rest → nothing (the
 *   contracts have no turn-ended event).
 *
 * Every text (prompt, command, arguments, error) goes through the redaction of SPEC §11 here,
 * before it can leave the process. A tool call's event id is uuid v5 of (session, tool_use_id)
 * when the payload carries one (toolCallEventId: parallel calls never share it). Other event ids
 * are uuid v5 of (session, hook event, counter), and a
 * hook delivered twice (same payload) reuses the counters it was given the first time, so the
 * second delivery is an idempotent duplicate, not a new prompt or call.
 */

export const CLAUDE_CODE_AGENT_KIND = 'claude-code';

/** The envelope version the mapping writes (contracts' SCHEMA_VERSION). */
export const HOOK_SCHEMA_VERSION = 1;

/** The envelope fields of every event a hook publishes for the session of `project`. */
export function hookEnvelope(
  sessionId: string,
  project: HookProject,
  eventId: string,
  timestamp: number,
) {
  return {
    eventId,
    tenantId: project.tenantId,
    projectId: project.projectId,
    sessionId,
    agentId: project.agentId,
    userId: project.userId,
    timestamp,
    schemaVersion: HOOK_SCHEMA_VERSION,
  };
}

/** Longest string kept inside `argsJson` (a Write's `content` can be a whole file). */
export const MAX_HOOK_ARG_CHARS = 4_000;
/** Longest error message kept. */
export const MAX_HOOK_ERROR_CHARS = 2_000;
/** How many recent deliveries a session remembers to recognise a re-delivered hook. */
export const MAX_REMEMBERED_DELIVERIES = 64;
/**
 * A payload seen again within this window is a re-delivery; later, the same payload is a new
 * event (a user may well type "continue" twice in a session, and a UserPromptSubmit payload has
 * no id of its own).
 */
export const REDELIVERY_WINDOW_MS = 10_000;

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

/** Where the session works: who and what the events are about. */
export interface HookProject {
  tenantId: string;
  projectId: string;
  /** Absolute; file paths are made relative to it (paths outside it are left out). */
  projectRoot: string | null;
  agentId: string;
  userId: string | null;
  gitBranch: string | null;
  gitHeadSha: string | null;
}

/** One delivery a session remembers: the counter it was given and when. */
export interface RememberedDelivery {
  fingerprint: string;
  counter: number;
  timestamp: number;
}

/**
 * What one session's hooks remember between processes (a small JSON file per session, kept by
 * the command). Counters are the last value given out (0: none yet).
 */
export interface HookSessionState {
  /** Last promptId given (UserPromptSubmit). */
  promptCount: number;
  /** Last stepIndex given (PostToolUse, PostToolUseFailure). */
  stepCount: number;
  /** Lifecycle events published (SessionStart, PreCompact, SessionEnd): their ids' counter. */
  lifecycleCount: number;
  /** When the session started (first SessionStart or first hook seen), epoch ms. */
  startedAt: number | null;
  /** PreToolUse times by tool_use_id, for the matching PostToolUse's durationMs. */
  toolStarts: Record<string, number>;
  /** Recent deliveries, newest last (MAX_REMEMBERED_DELIVERIES). */
  recent: RememberedDelivery[];
}

export function newHookSessionState(): HookSessionState {
  return {
    promptCount: 0,
    stepCount: 0,
    lifecycleCount: 0,
    startedAt: null,
    toolStarts: {},
    recent: [],
  };
}

/** Memory the hook should print back into the session (Claude Code `additionalContext`). */
export type HookMemoryRequest =
  | { kind: 'context'; hookEventName: 'SessionStart' | 'UserPromptSubmit'; query: string | null }
  | { kind: 'file'; hookEventName: 'PreToolUse'; toolName: string; filePath: string };

export interface HookMapping {
  events: Typed[];
  state: HookSessionState;
  memory: HookMemoryRequest | null;
  /** True when this exact payload was seen before (its events carry the same ids). */
  redelivered: boolean;
}

/** Tools whose PreToolUse asks for the memories of the file they open. */
const FILE_MEMORY_TOOLS = new Set(['Read', 'Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

/**
 * Maps one hook payload. `now` is the event time (epoch ms) unless the payload was seen before,
 * in which case the first delivery's time and counters are reused.
 */
export function mapClaudeCodeHook(
  payload: ClaudeCodeHookPayload,
  previous: HookSessionState,
  project: HookProject,
  now: number,
  options: {
    /**
     * Set when the counters could not be updated under the session lock (the caller stores
     * nothing): counter-based ids then include it, so they cannot equal an id another hook gave
     * out for the same counter. Ids from a tool_use_id do not need it.
     */
    idSalt?: string;
  } = {},
): HookMapping {
  const state = cloneState(previous);
  if (state.startedAt === null) state.startedAt = now;
  const fingerprint = uuidV5(JSON.stringify(payload));
  const seen = state.recent.find(
    (entry) =>
      entry.fingerprint === fingerprint && Math.abs(now - entry.timestamp) <= REDELIVERY_WINDOW_MS,
  );
  const timestamp = seen?.timestamp ?? now;
  const envelope = (hookEvent: string, counter: number, ownId?: string) =>
    hookEnvelope(
      payload.session_id,
      project,
      ownId ??
        (options.idSalt === undefined
          ? idOf('claude-code-hook', payload.session_id, hookEvent, counter)
          : idOf('claude-code-hook', payload.session_id, hookEvent, counter, options.idSalt)),
      timestamp,
    );
  const counted = (field: 'promptCount' | 'stepCount' | 'lifecycleCount'): number => {
    if (seen) return seen.counter;
    state[field] += 1;
    remember(state, { fingerprint, counter: state[field], timestamp });
    return state[field];
  };
  const result = (events: Typed[], memory: HookMemoryRequest | null = null): HookMapping => ({
    events,
    state,
    memory,
    redelivered: seen !== undefined,
  });

  switch (payload.hook_event_name) {
    case 'SessionStart': {
      const query = project.gitBranch ? branchWords(project.gitBranch) : null;
      const memory: HookMemoryRequest = { kind: 'context', hookEventName: 'SessionStart', query };
      if (payload.source === 'compact') return result([], memory);
      if (previous.startedAt === null || payload.source !== 'resume') state.startedAt = timestamp;
      const event: Typed<'SessionStarted'> = {
        type: 'SessionStarted',
        ...envelope('SessionStart', counted('lifecycleCount')),
        agentKind: CLAUDE_CODE_AGENT_KIND,
        gitBranch: project.gitBranch,
        gitHeadSha: project.gitHeadSha,
        methodology: null,
        workUnitRef: null,
      } satisfies SessionStarted & { type: 'SessionStarted' };
      return result([event], memory);
    }
    case 'UserPromptSubmit': {
      // Capped before redaction (text-caps.ts): a pasted 5 MB log costs the hook bounded work.
      const text = capText(payload.prompt ?? '', EVENT_TEXT_CAPS.text, redactText);
      const promptId = counted('promptCount');
      const event: Typed<'PromptSubmitted'> = {
        type: 'PromptSubmitted',
        ...envelope('UserPromptSubmit', promptId),
        promptId,
        source: 'user',
        channel: 'cli',
        channelKind: 'implicit',
        explicitThreadId: null,
        text,
        methodology: null,
        methodologyPhase: null,
        workUnitRef: null,
        parentEpisodeId: null,
      } satisfies PromptSubmitted & { type: 'PromptSubmitted' };
      const query = text.trim() === '' ? null : text;
      return result([event], { kind: 'context', hookEventName: 'UserPromptSubmit', query });
    }
    case 'PreToolUse': {
      if (payload.tool_use_id) state.toolStarts[payload.tool_use_id] = timestamp;
      const toolName = payload.tool_name ?? '';
      const [filePath] = FILE_MEMORY_TOOLS.has(toolName)
        ? hookFilePaths(toolName, payload.tool_input, project.projectRoot)
        : [];
      return result(
        [],
        filePath === undefined
          ? null
          : { kind: 'file', hookEventName: 'PreToolUse', toolName, filePath },
      );
    }
    case 'PostToolUse':
    case 'PostToolUseFailure': {
      const toolName = payload.tool_name?.trim() || 'unknown';
      const started = payload.tool_use_id ? state.toolStarts[payload.tool_use_id] : undefined;
      if (payload.tool_use_id) delete state.toolStarts[payload.tool_use_id];
      const failure =
        payload.hook_event_name === 'PostToolUseFailure'
          ? failureMessage(payload.error, payload.is_interrupt)
          : hookResponseFailure(payload.tool_response);
      const stepIndex = counted('stepCount');
      const event: Typed<'ToolCallObserved'> = {
        type: 'ToolCallObserved',
        ...envelope('PostToolUse', stepIndex, toolCallEventId(payload)),
        promptId: state.promptCount,
        stepIndex,
        toolName,
        filePaths: hookFilePaths(toolName, payload.tool_input, project.projectRoot),
        command: commandOf(toolName, payload.tool_input),
        argsJson: hookArgsJson(payload.tool_input),
        outcome: failure === null ? 'ok' : 'error',
        errorMessage: failure,
        durationMs: durationOf(payload.duration_ms, started, timestamp),
        tokensUsed: null,
        mcp: toolName.startsWith('mcp__'),
      } satisfies ToolCallObserved & { type: 'ToolCallObserved' };
      return result([event]);
    }
    case 'PreCompact': {
      const event: Typed<'CompactionPending'> = {
        type: 'CompactionPending',
        ...envelope('PreCompact', counted('lifecycleCount')),
        firstPromptId: null,
        lastPromptId: state.promptCount > 0 ? state.promptCount : null,
        tokenCount: null,
      } satisfies CompactionPending & { type: 'CompactionPending' };
      return result([event]);
    }
    case 'SessionEnd': {
      const startedAt = state.startedAt ?? timestamp;
      const event: Typed<'SessionEnded'> = {
        type: 'SessionEnded',
        ...envelope('SessionEnd', counted('lifecycleCount')),
        userMessageCount: state.promptCount,
        durationS: Math.max(0, Math.round((timestamp - startedAt) / 1000)),
        reason: payload.reason?.trim() ? redactSecrets(payload.reason).text : null,
      } satisfies SessionEnded & { type: 'SessionEnded' };
      return result([event]);
    }
    default:
      // Stop, SubagentStop, Notification, …: nothing in the contracts to publish.
      return result([]);
  }
}

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

function commandOf(toolName: string, toolInput: unknown): string | null {
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

const redactText = (text: string): string => redactSecrets(text).text;

function failureMessage(error: unknown, interrupted: unknown): string {
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

function durationOf(reported: unknown, started: number | undefined, now: number): number {
  if (typeof reported === 'number' && Number.isFinite(reported) && reported >= 0) {
    return Math.round(reported);
  }
  return started === undefined ? 0 : Math.max(0, Math.round(now - started));
}

/** `feat/fix-auth-timeout` → `feat fix auth timeout` (the SessionStart recall's query). */
function branchWords(branch: string): string | null {
  const words = branch
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 1 && !['main', 'master', 'develop', 'head'].includes(word));
  return words.length > 0 ? words.join(' ') : null;
}

function remember(state: HookSessionState, delivery: RememberedDelivery): void {
  state.recent.push(delivery);
  if (state.recent.length > MAX_REMEMBERED_DELIVERIES) {
    state.recent.splice(0, state.recent.length - MAX_REMEMBERED_DELIVERIES);
  }
}

function cloneState(state: HookSessionState): HookSessionState {
  return {
    promptCount: state.promptCount,
    stepCount: state.stepCount,
    lifecycleCount: state.lifecycleCount,
    startedAt: state.startedAt,
    toolStarts: { ...state.toolStarts },
    recent: state.recent.map((entry) => ({ ...entry })),
  };
}

/**
 * Two copies of one session's state (the data dir's and a fallback's, kept while the data dir was
 * unusable) as one: the larger of each counter, so no counter-based id is given out twice; the
 * earliest start; both sets of tool starts and recent deliveries.
 */
export function mergeHookSessionStates(a: HookSessionState, b: HookSessionState): HookSessionState {
  const recent = [...a.recent, ...b.recent]
    .filter(
      (entry, i, all) => all.findIndex((other) => other.fingerprint === entry.fingerprint) === i,
    )
    .sort((x, y) => x.timestamp - y.timestamp)
    .slice(-MAX_REMEMBERED_DELIVERIES);
  const starts = [a.startedAt, b.startedAt].filter((at): at is number => at !== null);
  return {
    promptCount: Math.max(a.promptCount, b.promptCount),
    stepCount: Math.max(a.stepCount, b.stepCount),
    lifecycleCount: Math.max(a.lifecycleCount, b.lifecycleCount),
    startedAt: starts.length > 0 ? Math.min(...starts) : null,
    toolStarts: { ...a.toolStarts, ...b.toolStarts },
    recent,
  };
}

/**
 * A state file's content back into a state; anything unreadable starts afresh (a lost counter
 * must not stop the hook: ids stay unique per counter, and the segmenter orders by promptId).
 */
export function parseHookSessionState(text: string | null): HookSessionState {
  if (text === null) return newHookSessionState();
  try {
    const value: unknown = JSON.parse(text);
    if (!isRecord(value)) return newHookSessionState();
    const count = (field: string) =>
      Number.isSafeInteger(value[field]) && (value[field] as number) >= 0
        ? (value[field] as number)
        : 0;
    const toolStarts = isRecord(value.toolStarts)
      ? Object.fromEntries(
          Object.entries(value.toolStarts).filter(([, at]) => typeof at === 'number'),
        )
      : {};
    const recent = Array.isArray(value.recent)
      ? value.recent.filter(
          (entry): entry is RememberedDelivery =>
            isRecord(entry) &&
            typeof entry.fingerprint === 'string' &&
            typeof entry.counter === 'number' &&
            typeof entry.timestamp === 'number',
        )
      : [];
    return {
      promptCount: count('promptCount'),
      stepCount: count('stepCount'),
      lifecycleCount: count('lifecycleCount'),
      startedAt: typeof value.startedAt === 'number' ? value.startedAt : null,
      toolStarts: toolStarts as Record<string, number>,
      recent,
    };
  } catch {
    return newHookSessionState();
  }
}

/**
 * SessionStart's reminder of the project's proposals awaiting review (seed 001, issue #20): one
 * line when there are any, '' when there are none (nothing is said about an empty queue).
 */
export function pendingReviewLine(pending: number): string {
  if (!Number.isFinite(pending) || pending <= 0) return '';
  const n = Math.floor(pending);
  return (
    `Engram: ${n} MEMORY.md ${n === 1 ? 'proposal awaits' : 'proposals await'} review for this ` +
    'project (`engram review` lists them).'
  );
}

/** Context and the review reminder, a blank line apart; either may be empty. */
export function withPendingReviewLine(context: string, pending: number): string {
  const line = pendingReviewLine(pending);
  if (line === '') return context;
  return context.trim() === '' ? line : `${context}\n\n${line}`;
}

/** Claude Code's JSON output carrying `additionalContext` for the hook event (or null). */
export function hookContextOutput(
  hookEventName: HookMemoryRequest['hookEventName'],
  additionalContext: string,
): string | null {
  if (additionalContext.trim() === '') return null;
  return JSON.stringify({ hookSpecificOutput: { hookEventName, additionalContext } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
