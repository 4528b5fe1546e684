import type { Typed } from '@engram/contracts';
import {
  hookFilePaths,
  mapClaudeCodeHook,
  newHookSessionState,
  type HookProject,
  type HookSessionState,
} from './claude-code-hooks';
import type { TranscriptCounts, TranscriptSession } from './claude-transcript';
import {
  closedSteps,
  isRecord,
  LineProblem,
  lineTimestamp,
  nonEmpty,
  parseLineObject,
  readLogLines,
  sessionOrder,
  toolResultStep,
  transcriptPayload,
  type TranscriptLineError,
  type TranscriptStep,
} from './transcript-lines';
import {
  MAX_CODEX_TEXT,
  outputFailure,
  PATCH_TOOL_NAME,
  toolCall,
  type PendingCall,
} from './codex-tool-calls';

/**
 * Codex CLI session logs ("rollouts") → Engram events (`engram import --codex-sessions`, issue
 * #22). Pure: the caller reads the files, and for `--follow` feeds each file's new complete lines.
 *
 * The format (openai/codex, codex-rs/protocol: `RolloutLine`, `RolloutItem`, `ResponseItem`,
 * `EventMsg`): Codex keeps each session as `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>
 * .jsonl`, appending one `{timestamp, type, payload}` object per line (flushed per line, so a
 * live file can be tailed). `type` is
 * - `session_meta`: the first line — `{id, timestamp, cwd, originator, cli_version, source,
 *   git?: {commit_hash, branch, repository_url}}`;
 * - `turn_context`: per turn — `{cwd, approval_policy, sandbox_policy, model, …}`;
 * - `response_item`: the model history, a `ResponseItem` tagged by its own `type`: `message`
 *   `{role, content: [{type: input_text|output_text, text}]}` (the user role also carries injected
 *   context: AGENTS.md, `<environment_context>`), `reasoning`, `function_call` `{name, arguments:
 *   JSON text, call_id}` (tools `shell` {command: argv}, `shell_command` {command}, `exec_command`
 *   {cmd}, `apply_patch` {input}, `update_plan`, MCP tools…), `custom_tool_call` `{name, input,
 *   call_id}` (freeform `apply_patch`), `local_shell_call` `{call_id, action: {type: exec,
 *   command: argv, working_directory}}`, their outputs `function_call_output` /
 *   `custom_tool_call_output` `{call_id, output}` (a string: shell output as JSON `{output,
 *   metadata: {exit_code, duration_seconds}}`, as `Exit code: N\nWall time: …\nOutput:\n…`, or
 *   unified exec's `…Process exited with code N…`), `web_search_call` `{action}`;
 * - `event_msg`: UI events persisted beside the history — `user_message` `{message, images}` is
 *   what the user typed (without the injected context), plus `agent_message`, `token_count`,
 *   `task_started`, `task_complete`, `turn_aborted`, `patch_apply_end`, `context_compacted`…;
 * - `compacted`: `{message, replacement_history}` — the history was compacted.
 *
 * Each session becomes the hook payloads a Claude Code session would have sent for the same work,
 * and those go through the hook's own mapping (mapClaudeCodeHook): the same events, redaction and
 * deterministic ids (session, hook event, counter; a tool call's id from its `call_id`), so
 * importing a rollout again yields the same ids. SessionStart at the first line; UserPromptSubmit
 * per `user_message`; PostToolUse / PostToolUseFailure per call paired with its output by
 * `call_id` — shell calls as `Bash` with their command text, `apply_patch` as `Edit` naming every
 * file of the patch; PreCompact per `compacted`; SessionEnd at the last line. The SessionStarted
 * event says `agentKind: "codex"`. Other lines are skipped; lines of a type this reader does not
 * know (newer Codex versions, or pre-2025-08 rollouts without the `{type, payload}` envelope) are
 * counted as `unknown`.
 */

export { MAX_CODEX_TEXT, MAX_PATCH_FILES, patchFiles } from './codex-tool-calls';

export const CODEX_AGENT_KIND = 'codex';

/** One hook payload a rollout implies; an apply_patch carries every file its patch names. */
export interface CodexStep extends TranscriptStep {
  /** Paths from the patch headers (absolute when the session's cwd is known), at most 200. */
  files?: string[];
}

/** One Codex session: its hook payloads in order, SessionStart first and SessionEnd last. */
export interface CodexSession extends TranscriptSession {
  /** The commit `session_meta.git.commit_hash` names, or null. */
  gitHeadSha: string | null;
  steps: CodexStep[];
}

export interface CodexCounts extends TranscriptCounts {
  /** Lines of a type (or response item type) this reader does not know: skipped. */
  unknown: number;
}

/** A `user_message` that Codex injected rather than the user typed. */
const NOT_TYPED =
  /^\s*(<user_instructions>|<environment_context>|<user_shell_command>|# AGENTS\.md instructions)/;
/** The IDE extension prefixes the typed request with its context and this heading. */
const USER_MESSAGE_BEGIN = '## My request for Codex:';

interface CodexDraft extends CodexSession {
  file: string;
  /** The cwd of the current turn (turn_context may change it), for relative patch paths. */
  currentCwd: string | null;
  first: number;
  last: number;
  pending: Map<string, PendingCall>;
}

/**
 * Reads rollout files into sessions. `read` may be called again with the next complete lines of
 * a file (`firstLine` numbering them): its session goes on where it stopped, so a followed file
 * gives the same steps as the whole file read at once. Bad lines are collected in `errors`.
 */
export class CodexSessionReader {
  readonly errors: TranscriptLineError[] = [];
  private lines = 0;
  private unknown = 0;
  private orphans = 0;
  private readonly drafts = new Map<string, CodexDraft>();
  /** Each file's session (its first session_meta's id, else the uuid in its name). */
  private readonly fileSessions = new Map<string, string>();

  /** Reads lines of one file; `firstLine` is the number of the first (for errors). */
  read(content: string, file: string, firstLine = 1): void {
    const readLine = (text: string) => this.readLine(text, file);
    this.lines += readLogLines(content, file, firstLine, this.errors, readLine);
  }

  /** The sessions read, ordered by their first line's time, each closed by a SessionEnd. */
  sessions(): CodexSession[] {
    return sessionOrder(this.drafts.values()).map((draft) => ({
      sessionId: draft.sessionId,
      cwd: draft.cwd,
      gitBranch: draft.gitBranch,
      gitHeadSha: draft.gitHeadSha,
      // The rollout records no end: the session ends where its log stops.
      steps: closedSteps(draft),
    }));
  }

  counts(): CodexCounts {
    let pending = 0;
    for (const draft of this.drafts.values()) pending += draft.pending.size;
    return {
      lines: this.lines,
      duplicates: 0,
      unpaired: this.orphans + pending,
      unknown: this.unknown,
    };
  }

  private readLine(text: string, file: string): void {
    const line = parseLineObject(text);
    if (typeof line.type !== 'string' || !isRecord(line.payload)) {
      // No {type, payload} envelope: a pre-2025-08 rollout line, or not a rollout at all.
      this.unknown += 1;
      return;
    }
    const at = lineTimestamp(line.timestamp);
    const payload = line.payload;
    const draft = this.draft(file, line.type === 'session_meta' ? payload : null, at);
    switch (line.type) {
      case 'session_meta':
        return;
      case 'turn_context': {
        const cwd = nonEmpty(payload.cwd);
        if (cwd !== null) draft.currentCwd = cwd;
        draft.cwd ??= cwd;
        return;
      }
      case 'response_item':
        return this.readResponseItem(draft, payload, at);
      case 'event_msg':
        return this.readEvent(draft, payload, at);
      case 'compacted':
        draft.steps.push({
          payload: transcriptPayload(draft, 'PreCompact', { trigger: 'auto' }),
          at,
        });
        return;
      default:
        this.unknown += 1;
    }
  }

  private draft(file: string, meta: Record<string, unknown> | null, at: number): CodexDraft {
    let sessionId = this.fileSessions.get(file);
    if (sessionId === undefined) {
      sessionId = nonEmpty(meta?.id) ?? sessionIdOfFile(file);
      this.fileSessions.set(file, sessionId);
    }
    let draft = this.drafts.get(sessionId);
    if (!draft) {
      draft = {
        sessionId,
        cwd: null,
        currentCwd: null,
        gitBranch: null,
        gitHeadSha: null,
        steps: [],
        file,
        first: at,
        last: at,
        pending: new Map(),
      };
      this.drafts.set(sessionId, draft);
    }
    if (meta !== null && draft.cwd === null) {
      draft.cwd = nonEmpty(meta.cwd);
      draft.currentCwd ??= draft.cwd;
      const git = isRecord(meta.git) ? meta.git : {};
      draft.gitBranch ??= nonEmpty(git.branch);
      draft.gitHeadSha ??= nonEmpty(git.commit_hash);
    }
    draft.first = Math.min(draft.first, at);
    draft.last = Math.max(draft.last, at);
    return draft;
  }

  private readEvent(draft: CodexDraft, event: Record<string, unknown>, at: number): void {
    if (event.type !== 'user_message' || typeof event.message !== 'string') return;
    // Older versions tagged injected context with a kind other than "plain".
    if (event.kind !== undefined && event.kind !== 'plain') return;
    let prompt = event.message.slice(0, MAX_CODEX_TEXT);
    const request = prompt.indexOf(USER_MESSAGE_BEGIN);
    if (request >= 0) prompt = prompt.slice(request + USER_MESSAGE_BEGIN.length);
    if (prompt.trim() === '' || NOT_TYPED.test(prompt)) return;
    draft.steps.push({ payload: transcriptPayload(draft, 'UserPromptSubmit', { prompt }), at });
  }

  private readResponseItem(draft: CodexDraft, item: Record<string, unknown>, at: number): void {
    switch (item.type) {
      case 'message':
      case 'reasoning':
        // Prompts come from event_msg user_message (without the injected context).
        return;
      case 'function_call':
      case 'custom_tool_call':
      case 'local_shell_call': {
        const callId = nonEmpty(item.call_id) ?? nonEmpty(item.id);
        if (callId === null) throw new LineProblem(`${item.type} without a "call_id"`);
        draft.pending.set(callId, { ...toolCall(item, draft.currentCwd), at });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
        return this.readOutput(draft, item, at);
      case 'web_search_call': {
        // No call id and no output of its own: a finished search.
        const fields = { tool_name: 'web_search', tool_input: item.action, tool_response: {} };
        draft.steps.push({ payload: transcriptPayload(draft, 'PostToolUse', fields), at });
        return;
      }
      default:
        this.unknown += 1;
    }
  }

  private readOutput(draft: CodexDraft, item: Record<string, unknown>, at: number): void {
    const callId = nonEmpty(item.call_id);
    const call = callId === null ? undefined : draft.pending.get(callId);
    if (callId === null || call === undefined) {
      this.orphans += 1;
      return;
    }
    draft.pending.delete(callId);
    const step = toolResultStep(draft, callId, call, outputFailure(item.output), at);
    draft.steps.push({ ...step, ...(call.files && { files: call.files }) });
  }
}

/** What mapping steps gave: the events, and the session's hook state after them. */
export interface CodexMapping {
  events: Typed[];
  state: HookSessionState;
}

/**
 * Steps of one session through the hook's mapping, from `state` on (a followed session maps its
 * new steps with the state its earlier ones left). `project` says whose the events are.
 */
export function mapCodexSteps(
  steps: readonly CodexStep[],
  state: HookSessionState,
  project: HookProject,
): CodexMapping {
  let current = state;
  const events: Typed[] = [];
  for (const step of steps) {
    const mapping = mapClaudeCodeHook(step.payload, current, project, step.at);
    current = mapping.state;
    events.push(...mapping.events.map((event) => asCodexEvent(event, step, project)));
  }
  return { events, state: current };
}

/** A whole session's events, in order. */
export function mapCodexSession(session: CodexSession, project: HookProject): Typed[] {
  return mapCodexSteps(session.steps, newHookSessionState(), project).events;
}

/** The hook's event as Codex's: its agent kind, and every file a patch names. */
function asCodexEvent(event: Typed, step: CodexStep, project: HookProject): Typed {
  if (event.type === 'SessionStarted') return { ...event, agentKind: CODEX_AGENT_KIND };
  if (event.type === 'ToolCallObserved' && step.files !== undefined) {
    const paths = step.files.flatMap((file) =>
      hookFilePaths(PATCH_TOOL_NAME, { file_path: file }, project.projectRoot),
    );
    return { ...event, filePaths: [...new Set(paths)] };
  }
  return event;
}

/** A call item as the hook's tool name and input (shell → Bash, apply_patch → Edit). */
function sessionIdOfFile(file: string): string {
  const name = file.split(/[\\/]/).pop() ?? file;
  const uuid = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(name);
  return uuid?.[1] ?? (name.replace(/\.jsonl$/, '') || file);
}
