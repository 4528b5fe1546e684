import type {
  CompactionPending,
  PromptSubmitted,
  SessionEnded,
  SessionStarted,
  ToolCallObserved,
  Typed,
} from '@engram/contracts';
import { idOf, uuidV5 } from '../ids/deterministic-id';
import { capText, EVENT_TEXT_CAPS, redactSecrets } from '../redaction';
import {
  cloneHookSessionState,
  rememberDelivery,
  type HookSessionState,
} from './hook-session-state';
import {
  commandOf,
  durationOf,
  failureMessage,
  hookArgsJson,
  hookFilePaths,
  hookResponseFailure,
  redactText,
  toolCallEventId,
} from './hook-tool-input';
import type { HookMemoryRequest } from './hook-context-output';
import type { ClaudeCodeHookPayload } from './hook-payload';
import { isMcpTool, mcpResultSummary, plannedStepsOf } from './plan-and-mcp-result';

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
 * - PostToolUse / PostToolUseFailure → ToolCallObserved (stepIndex = the session's tool counter;
 *   a TodoWrite / update_plan call carries its plan's step count, a successful MCP call the text
 *   of its result: plan-and-mcp-result.ts);
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

// The mapping's public API, importable from here as before the split.
export * from './hook-context-output';
export * from './hook-payload';
export * from './hook-session-state';
export {
  hookArgsJson,
  hookFilePaths,
  hookResponseFailure,
  MAX_HOOK_ARG_CHARS,
  MAX_HOOK_ERROR_CHARS,
  toolCallEventId,
} from './hook-tool-input';

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

/**
 * A payload seen again within this window is a re-delivery; later, the same payload is a new
 * event (a user may well type "continue" twice in a session, and a UserPromptSubmit payload has
 * no id of its own).
 */
export const REDELIVERY_WINDOW_MS = 10_000;

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
  const state = cloneHookSessionState(previous);
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
    rememberDelivery(state, { fingerprint, counter: state[field], timestamp });
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
        mcp: isMcpTool(toolName),
        plannedSteps: plannedStepsOf(toolName, payload.tool_input),
        resultSummary: failure === null ? mcpResultSummary(toolName, payload.tool_response) : null,
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

/** `feat/fix-auth-timeout` → `feat fix auth timeout` (the SessionStart recall's query). */
function branchWords(branch: string): string | null {
  const words = branch
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 1 && !['main', 'master', 'develop', 'head'].includes(word));
  return words.length > 0 ? words.join(' ') : null;
}
