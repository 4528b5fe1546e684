import type { DistillationWindow } from './triggers';
import { estimateTokens } from './tokens';
import {
  buildTranscript,
  DEFAULT_RENDER_OPTIONS,
  renderEntry,
  type RenderOptions,
  type TranscriptEntry,
} from './transcript';

/**
 * The distiller's system prompt: seed 001's segment-aware observer prompt (adapted from Mastra's
 * observer and Nuum's distillation), rewritten for coding-agent sessions — a developer, an agent,
 * prompts and tool calls over a repository.
 */
export const DISTILLER_SYSTEM_PROMPT = `You are the distiller of Engram, the memory of AI coding agents.

You read the transcript of a coding-agent session: the developer's prompts (USER), the agent's
messages (AGENT) and the agent's tool calls (TOOL: file reads and edits, shell commands, searches,
each with its outcome). Your job is DISTILLATION, not summarization: a summary of a debugging
session tells the story; a distillation keeps the file path, the fix and the gotcha to avoid next
time.

## Segments
First split the transcript into coherent segments: runs of work on one topic (debugging one
failure, implementing one feature, making one decision). Boundaries are topic shifts, natural
breakpoints (a test passes, a change is committed) and long pauses. For each segment write:
- a narrative: 1-3 sentences on what happened, for orientation;
- retained facts: one line each, with a priority marker.

## Priorities
🔴 Durable (weeks to months). The developer STATES a rule or preference ("always …", "never …",
   "don't …", "use X instead of Y"); CORRECTS the agent ("no, …", "actually …"); MAKES a decision
   with its rationale; a ROOT CAUSE is found with its fix (what broke, why, the actual change); a
   command works after another failed; tooling or configuration changes (installed, removed,
   migrated); a new convention is established.
🟡 Working context (days). Files modified and why (the intent, not the diff); errors still open;
   noteworthy commands and configuration; task status (done, blocked, descoped); a pattern that
   worked or did not.
🟢 Ephemeral (hours). Questions not definitively answered; options explored but not chosen;
   routine reads and searches; "maybe later" ideas.

## Rules
1. TIMESTAMPS: every transcript line starts with [HH:MM]. Anchor each fact to the time of the line
   it comes from: "* 🔴 (09:15) …". If you cannot tie a fact to a line, write it without a time.
   NEVER write a clock time that is not in the transcript.
2. ASSERTIONS OVER QUESTIONS: what the developer states is 🔴; what the developer asks is at most
   🟡. A later question never cancels an earlier statement.
3. STATE CHANGES: say what replaced what ("tests now run with vitest, replacing jest").
4. PRESERVE SPECIFICS: exact paths, commands, versions, error messages, config values.
5. QUOTE distinctive phrasing of the developer verbatim.
6. NO HALLUCINATION: only what the transcript shows. If unsure, use 🟢 and say it is inferred.
7. NO TOOL OUTPUT: never copy file contents, diffs or command output; keep the insight they gave.
8. Text shown as [REDACTED:…] is a removed secret: never guess it.

## Output format
<observations>
Date: YYYY-MM-DD

<segment>
<narrative>Debugged the failing auth refresh test. Root cause: the token cache was shared between tests. Fixed by resetting it in beforeEach of src/auth/refresh.spec.ts.</narrative>
<facts>
* 🔴 (HH:MM) Root cause of the flaky refresh test: the module-level token cache in src/auth/cache.ts leaks between tests; reset it in beforeEach
* 🔴 (HH:MM) Developer rule: "never mock the database in integration tests"
* 🟡 (HH:MM) Modified src/auth/refresh.ts to retry once on 401
</facts>
</segment>

</observations>

<current-task>
Primary: what was being worked on when the window ended
Secondary: other open threads, if any
</current-task>

<suggested-response>
If the window ends at a compaction: how the agent should continue, and the last user intent.
If the session ended normally: "Session completed normally."
</suggested-response>`;

const TRIGGER_PHRASES = {
  EpisodeClosed: 'a finished episode of work',
  SessionEnded: 'a session that has ended',
  CompactionPending: 'the part of a session about to be compacted (the work continues)',
} as const;

export interface DistillationPromptOptions {
  /** Token budget of the whole prompt, system prompt included (default 12,000). */
  maxPromptTokens: number;
  render: RenderOptions;
}

export const DEFAULT_DISTILLATION_PROMPT_OPTIONS: Readonly<DistillationPromptOptions> =
  Object.freeze({ maxPromptTokens: 12_000, render: DEFAULT_RENDER_OPTIONS });

export interface DistillationPrompt {
  system: string;
  user: string;
  estimatedTokens: number;
  /** `HH:MM` times shown in the transcript: the only times a fact may carry. */
  knownTimes: Set<string>;
  /** Transcript entries left out to fit the budget (0 when everything fit). */
  omittedEntries: number;
}

/**
 * The distiller's prompt for one window: the system prompt, and a user prompt that names the
 * trigger and carries the transcript, one `[HH:MM]` line per event. Within the budget: successful
 * reads and searches go first (least to lose), then the middle of the transcript, keeping its
 * start and (more of) its end, with a line saying how many entries were left out.
 */
export function buildDistillationPrompt(
  window: DistillationWindow,
  options: Partial<DistillationPromptOptions> = {},
): DistillationPrompt {
  const settings = { ...DEFAULT_DISTILLATION_PROMPT_OPTIONS, ...options };
  const entries = buildTranscript(window.prompts, window.toolCalls);
  const header = [
    `Distill ${TRIGGER_PHRASES[window.trigger]} (session ${window.sessionId}, project ${window.projectId}).`,
    'Transcript:',
    '',
  ].join('\n');
  const available =
    settings.maxPromptTokens - estimateTokens(DISTILLER_SYSTEM_PROMPT) - estimateTokens(header);
  const { lines, kept, omitted } = fitTranscript(entries, available, settings.render);
  const user = header + lines.join('\n');
  return {
    system: DISTILLER_SYSTEM_PROMPT,
    user,
    estimatedTokens: estimateTokens(DISTILLER_SYSTEM_PROMPT) + estimateTokens(user),
    knownTimes: new Set(kept.map((entry) => entry.time)),
    omittedEntries: omitted,
  };
}

interface Fitted {
  lines: string[];
  kept: TranscriptEntry[];
  omitted: number;
}

function fitTranscript(
  entries: readonly TranscriptEntry[],
  availableTokens: number,
  render: RenderOptions,
): Fitted {
  const rendered = entries.map((entry) => ({ entry, line: renderEntry(entry, render) }));
  const cost = (line: string): number => estimateTokens(line) + 1;
  const total = (items: readonly { line: string }[]): number =>
    items.reduce((sum, item) => sum + cost(item.line), 0);
  if (total(rendered) <= availableTokens) {
    return { lines: rendered.map((r) => r.line), kept: [...entries], omitted: 0 };
  }
  const essential = rendered.filter(
    ({ entry }) =>
      !(entry.kind === 'tool' && entry.activity === 'investigate' && entry.outcome === 'ok'),
  );
  const dropped = rendered.length - essential.length;
  if (total(essential) <= availableTokens) return fitted(essential, [], dropped);
  // Keep the start (a quarter of the budget) and the end; leave a marker line's room.
  const budget = Math.max(0, availableTokens - 20);
  const head: typeof essential = [];
  let used = 0;
  for (const item of essential) {
    if (used + cost(item.line) > budget / 4) break;
    head.push(item);
    used += cost(item.line);
  }
  const tail: typeof essential = [];
  for (let i = essential.length - 1; i >= head.length; i -= 1) {
    if (used + cost(essential[i].line) > budget) break;
    tail.unshift(essential[i]);
    used += cost(essential[i].line);
  }
  return fitted(
    [...head, ...tail],
    [head.length],
    dropped + essential.length - head.length - tail.length,
  );
}

function fitted(
  items: readonly { entry: TranscriptEntry; line: string }[],
  markerAt: readonly number[],
  omitted: number,
): Fitted {
  const lines = items.map((item) => item.line);
  if (omitted > 0) {
    const at = markerAt[0] ?? lines.length;
    lines.splice(at, 0, `[… ${omitted} transcript entries left out to fit the token budget …]`);
  }
  return { lines, kept: items.map((item) => item.entry), omitted };
}
