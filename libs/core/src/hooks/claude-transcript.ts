import type { Typed } from '@engram/contracts';
import {
  hookResponseFailure,
  mapClaudeCodeHook,
  newHookSessionState,
  type HookProject,
} from './claude-code-hooks';
import { isMcpTool } from './plan-and-mcp-result';
import {
  closedSteps,
  isRecord,
  LineProblem,
  lineTimestamp as timestampOf,
  nonEmpty,
  parseLineObject as parseObject,
  readLogLines,
  sessionOrder,
  transcriptPayload as stepPayload,
  toolResultStep,
  TranscriptLineError,
  type TranscriptStep,
} from './transcript-lines';

export { TranscriptLineError, type TranscriptStep } from './transcript-lines';

/**
 * Claude Code transcripts → the hook payloads the session would have sent → Engram events
 * (`engram import --claude-transcripts`, issue #7). Pure: the caller reads the files.
 *
 * The format (docs/claude-code-hooks.md, "Transcripts"): Claude Code keeps each session as
 * `~/.claude/projects/<munged cwd>/<session id>.jsonl`, one JSON object per line (storage:
 * code.claude.com/docs/en/sessions; Anthropic calls the line format internal, so this follows
 * what community parsers document, e.g. txcript's docs/formats/claude-code.md). Lines are
 * tagged by `type`: `user` and `assistant` carry an envelope (`uuid`, `parentUuid`, `sessionId`,
 * `timestamp`, `cwd`, `gitBranch`, `isSidechain`, `isMeta`…) around an Anthropic Messages
 * `message` {role, content: string | blocks}; blocks are `text`, `thinking`, `tool_use` {id,
 * name, input} (assistant) and `tool_result` {tool_use_id, content, is_error} (user, with the raw
 * result beside it in `toolUseResult`); `system` lines are bookkeeping (`subtype:
 * compact_boundary` marks a compaction); `summary`, `file-history-snapshot` and other types are
 * bookkeeping too and are skipped.
 *
 * Each session becomes the hook payloads Claude Code would have sent for it — SessionStart at its
 * first line, UserPromptSubmit per typed prompt, PostToolUse / PostToolUseFailure per tool_use
 * paired with its tool_result, PreCompact per compaction, SessionEnd at its last line — and those
 * go through the hook's own mapping (mapClaudeCodeHook): the same events, the same redaction,
 * and the same deterministic ids (session, hook event, counter), so importing a file twice
 * yields the same event ids again.
 */

/** One session read from transcripts: its hook payloads in order, SessionStart/End included. */
export interface TranscriptSession {
  sessionId: string;
  /** The first `cwd` its lines name (the project), or null. */
  cwd: string | null;
  /** The first `gitBranch` its lines name, or null. */
  gitBranch: string | null;
  steps: TranscriptStep[];
}

/** What reading produced besides sessions. */
export interface TranscriptCounts {
  lines: number;
  /** user / assistant lines already read (same uuid, e.g. a resumed session's copy). */
  duplicates: number;
  /** tool_use without a tool_result (a session cut off mid-call), or a result without a call. */
  unpaired: number;
}

/** Error texts kept from a tool result (the hook mapping cuts them shorter still). */
const MAX_ERROR_TEXT = 64_000;

/** A prompt that is slash-command markup or an interruption notice, not something typed. */
const NOT_TYPED =
  /^\s*(<command-name>|<command-message>|<local-command-stdout>|<local-command-caveat>|\[Request interrupted by user)/;

interface PendingToolUse {
  name: string;
  input: unknown;
  at: number;
}

interface SessionDraft extends TranscriptSession {
  file: string;
  first: number;
  last: number;
  pending: Map<string, PendingToolUse>;
}

/**
 * Reads transcript files (any number, in the order given) into sessions. A session may span
 * files; a line whose `uuid` was read before is skipped. Bad lines are collected in `errors`.
 */
export class ClaudeTranscriptReader {
  readonly errors: TranscriptLineError[] = [];
  private lines = 0;
  private duplicates = 0;
  private orphans = 0;
  private readonly drafts = new Map<string, SessionDraft>();
  private readonly seen = new Set<string>();

  /** Reads one file's content; `file` names it in errors and is the fallback session id. */
  read(content: string, file: string): void {
    this.lines += readLogLines(content, file, 1, this.errors, (text) => this.readLine(text, file));
  }

  /** The sessions read, ordered by their first line's time, each closed by a SessionEnd. */
  sessions(): TranscriptSession[] {
    return sessionOrder(this.drafts.values()).map((draft) => ({
      sessionId: draft.sessionId,
      cwd: draft.cwd,
      gitBranch: draft.gitBranch,
      steps: closedSteps(draft),
    }));
  }

  /** Lines read, duplicates skipped, and tool calls and results left without their pair. */
  counts(): TranscriptCounts {
    let pending = 0;
    for (const draft of this.drafts.values()) pending += draft.pending.size;
    return { lines: this.lines, duplicates: this.duplicates, unpaired: this.orphans + pending };
  }

  private readLine(text: string, file: string): void {
    const line = parseObject(text);
    const type = line.type;
    if (typeof type !== 'string' || type === '') throw new LineProblem('"type" is missing');
    if (type !== 'user' && type !== 'assistant' && type !== 'system') return;
    if (typeof line.uuid === 'string') {
      if (this.seen.has(line.uuid)) {
        this.duplicates += 1;
        return;
      }
      this.seen.add(line.uuid);
    }
    const at = timestampOf(line.timestamp);
    const draft = this.draft(line, file, at);
    if (type === 'system') this.readSystem(draft, line, at);
    else if (type === 'assistant') this.readAssistant(draft, messageOf(line), at);
    else this.readUser(draft, line, messageOf(line), at);
  }

  private draft(line: Record<string, unknown>, file: string, at: number): SessionDraft {
    const sessionId = nonEmpty(line.sessionId) ?? fileStem(file);
    let draft = this.drafts.get(sessionId);
    if (!draft) {
      draft = {
        sessionId,
        cwd: null,
        gitBranch: null,
        steps: [],
        file,
        first: at,
        last: at,
        pending: new Map(),
      };
      this.drafts.set(sessionId, draft);
    }
    draft.cwd ??= nonEmpty(line.cwd);
    draft.gitBranch ??= nonEmpty(line.gitBranch);
    draft.first = Math.min(draft.first, at);
    draft.last = Math.max(draft.last, at);
    return draft;
  }

  private readSystem(draft: SessionDraft, line: Record<string, unknown>, at: number): void {
    if (line.subtype !== 'compact_boundary') return;
    const metadata = isRecord(line.compactMetadata) ? line.compactMetadata : {};
    const trigger = typeof metadata.trigger === 'string' ? metadata.trigger : 'auto';
    draft.steps.push({ payload: stepPayload(draft, 'PreCompact', { trigger }), at });
  }

  private readAssistant(draft: SessionDraft, content: unknown, at: number): void {
    for (const block of blocksOf(content)) {
      if (block.type !== 'tool_use' || typeof block.id !== 'string') continue;
      const name = typeof block.name === 'string' ? block.name : 'unknown';
      draft.pending.set(block.id, { name, input: block.input, at });
    }
  }

  private readUser(
    draft: SessionDraft,
    line: Record<string, unknown>,
    content: unknown,
    at: number,
  ): void {
    // Injected by Claude Code, not typed: caveats, compaction summaries.
    if (line.isMeta === true || line.isCompactSummary === true) return;
    const blocks = blocksOf(content);
    const results = blocks.filter((block) => block.type === 'tool_result');
    for (const result of results) this.readToolResult(draft, result, line.toolUseResult, at);
    // A sub-agent's "user" turns are the Task tool's prompt, not the user's.
    if (results.length > 0 || line.isSidechain === true) return;
    const prompt =
      typeof content === 'string'
        ? content
        : blocks
            .filter((block) => block.type === 'text' && typeof block.text === 'string')
            .map((block) => block.text as string)
            .join('\n');
    if (prompt.trim() === '' || NOT_TYPED.test(prompt)) return;
    draft.steps.push({ payload: stepPayload(draft, 'UserPromptSubmit', { prompt }), at });
  }

  private readToolResult(
    draft: SessionDraft,
    result: Record<string, unknown>,
    raw: unknown,
    at: number,
  ): void {
    const id = typeof result.tool_use_id === 'string' ? result.tool_use_id : null;
    const call = id === null ? undefined : draft.pending.get(id);
    if (id === null || call === undefined) {
      this.orphans += 1;
      return;
    }
    draft.pending.delete(id);
    const failure =
      result.is_error === true
        ? resultText(result.content) || 'tool call failed'
        : hookResponseFailure(raw);
    // An MCP tool's result is what the e2e observations read; other results are not kept.
    const response = isMcpTool(call.name) ? { content: result.content } : {};
    draft.steps.push(toolResultStep(draft, id, call, failure, at, response));
  }
}

/**
 * A session's events: its steps through the hook's mapping, in order, each at its own time.
 * `project` says whose they are (tenant, project, root for relative file paths, branch).
 */
export function mapTranscriptSession(session: TranscriptSession, project: HookProject): Typed[] {
  let state = newHookSessionState();
  const events: Typed[] = [];
  for (const step of session.steps) {
    const mapping = mapClaudeCodeHook(step.payload, state, project, step.at);
    state = mapping.state;
    events.push(...mapping.events);
  }
  return events;
}

/**
 * Puts many sessions' events in an order that publishes in few batches: each session's own order
 * is kept (its events share one key, one partition: the order its consumers see), while different
 * sessions, independent of each other, are interleaved so that events of the same topic come
 * together. Each round takes the topic most sessions are at next and moves every such session on
 * through its events of that topic. `engram replay` batches consecutive events of one topic, so
 * this turns one batch per topic switch of every session into about one per round.
 */
export function batchAcrossSessions<T>(
  sessions: readonly T[][],
  topicOf: (event: T) => string,
): T[] {
  const next = sessions.map(() => 0);
  const ordered: T[] = [];
  for (;;) {
    const waiting = new Map<string, number>();
    sessions.forEach((events, i) => {
      if (next[i] < events.length) {
        const topic = topicOf(events[next[i]]);
        waiting.set(topic, (waiting.get(topic) ?? 0) + 1);
      }
    });
    if (waiting.size === 0) return ordered;
    // Most sessions first; ties by name, so the order is the same on every run.
    const [topic] = [...waiting].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
    sessions.forEach((events, i) => {
      while (next[i] < events.length && topicOf(events[next[i]]) === topic) {
        ordered.push(events[next[i]]);
        next[i] += 1;
      }
    });
  }
}

function messageOf(line: Record<string, unknown>): unknown {
  const message = line.message;
  if (
    !isRecord(message) ||
    (typeof message.content !== 'string' && !Array.isArray(message.content))
  ) {
    throw new LineProblem(`${String(line.type)} line without a "message" with "content"`);
  }
  return message.content;
}

function blocksOf(content: unknown): Record<string, unknown>[] {
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

/** A tool_result's content: a string, or text blocks. */
function resultText(content: unknown): string {
  const text =
    typeof content === 'string'
      ? content
      : blocksOf(content)
          .map((block) => (typeof block.text === 'string' ? block.text : ''))
          .filter(Boolean)
          .join('\n');
  return text.slice(0, MAX_ERROR_TEXT).trim();
}

function fileStem(file: string): string {
  const name = file.split(/[\\/]/).pop() ?? file;
  return name.replace(/\.jsonl$/, '') || file;
}
