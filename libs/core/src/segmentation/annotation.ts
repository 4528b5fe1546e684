import { distinctEntities, entityKey, extractEntityMentions, fileBaseName } from './entities';
import { wordCount } from './intent-keywords';

/**
 * Episode annotation (seed 000 "Observation annotation", SPEC §4.4, seed 003 structured
 * metadata): what happened during an episode, computed from the tool calls and prompts of its
 * prompt range when it closes. Descriptive, not prescriptive — it never moves a boundary.
 * Pure and deterministic: the same input in any order gives the same, ordered output.
 */

export type ToolActivity = 'investigate' | 'execute' | 'other';

export type AnnotationOutcome = 'success' | 'failure' | 'partial' | 'ongoing' | 'unknown';

/** The fields of a ToolCallObserved (agent.tool-calls.v1) the annotation reads. */
export interface AnnotationToolCall {
  /** When given, duplicates (same eventId) count once. */
  eventId?: string;
  promptId: number;
  stepIndex: number;
  toolName: string;
  filePaths: readonly string[];
  command: string | null;
  outcome: 'ok' | 'error';
  errorMessage: string | null;
  timestamp: number;
  agentId: string;
  userId: string | null;
  mcp: boolean;
}

/** The fields of a PromptSubmitted (agent.prompts.v1) the annotation reads. */
export interface AnnotationPrompt {
  eventId?: string;
  promptId: number;
  source: 'user' | 'agent' | 'system';
  text: string;
  timestamp: number;
  agentId: string;
  userId: string | null;
  methodology: string | null;
  methodologyPhase: string | null;
}

/**
 * A QA verdict that applies to the episode: ValidationPassed (`passed: true`), ValidationFailed
 * (`false`) or SubtaskValidated (`succeeded`). The caller decides which validations belong to
 * the episode (they carry no prompt id); all given ones are used.
 */
export interface AnnotationValidation {
  passed: boolean;
  timestamp: number;
}

export interface EpisodeAnnotationInput {
  firstPromptId: number;
  lastPromptId: number;
  /** Prompts of the session; those outside [firstPromptId, lastPromptId] are ignored. */
  prompts: readonly AnnotationPrompt[];
  /** Tool calls of the session; those serving a prompt outside the range are ignored. */
  toolCalls: readonly AnnotationToolCall[];
  validations?: readonly AnnotationValidation[];
  /** Whether the episode has closed (an open episode's outcome is `ongoing`). */
  closed: boolean;
}

export interface AnnotationHotFile {
  path: string;
  touches: number;
}

export interface EpisodeAnnotation {
  obsCount: number;
  investigate: number;
  execute: number;
  failures: number;
  /** Most touched first, then by path; at most `maxHotFiles`. */
  hotFiles: AnnotationHotFile[];
  /** From the first (user) prompt to the last event; 0 without events. */
  durationMs: number;
  startedAt: number | null;
  lastEventAt: number | null;
  /** Distinct tool names, most used first, then by name. */
  toolsUsed: string[];
  /** Distinct user ids (first seen first), then distinct agent ids (first seen first). */
  participants: string[];
  /** Most mentioned first, then first seen; at most `maxEntities`. */
  entities: string[];
  outcome: AnnotationOutcome;
  tags: string[];
  keyDecisions: string[];
  /** A representative user prompt: the first non-terse one. */
  intent: string | null;
}

export interface AnnotationOptions {
  maxHotFiles: number;
  maxEntities: number;
  maxKeyDecisions: number;
  /** Characters kept of one key decision. */
  maxDecisionChars: number;
  /** Characters kept of the intent prompt. */
  maxIntentChars: number;
  /** A prompt of fewer words is terse (SPEC §4.2: 5). */
  terseWordCount: number;
  /** investigate ≥ ratio × execute → investigate-heavy (and the other way round). */
  heavyActivityRatio: number;
  /** Fewer investigate + execute calls than this get no activity tag. */
  minActivityForTag: number;
  /** This many failed calls in a row → `stuck-loop`. */
  stuckLoopLength: number;
}

export const DEFAULT_ANNOTATION_OPTIONS: Readonly<AnnotationOptions> = Object.freeze({
  maxHotFiles: 10,
  maxEntities: 20,
  maxKeyDecisions: 5,
  maxDecisionChars: 200,
  maxIntentChars: 500,
  terseWordCount: 5,
  heavyActivityRatio: 2,
  minActivityForTag: 3,
  stuckLoopLength: 3,
});

/**
 * Claude Code's reading and searching tools (then other agents' spellings of the same), names
 * lower-cased without separators.
 */
const INVESTIGATE_TOOLS: ReadonlySet<string> = new Set(
  words(`
  read grep glob ls webfetch websearch notebookread readfile viewfile view search find listdir
  listfiles codebasesearch filesearch grepsearch
`),
);

/** Claude Code's editing, writing and command tools, then other agents' spellings. */
const EXECUTE_TOOLS: ReadonlySet<string> = new Set(
  words(`
  edit multiedit write notebookedit bash shell exec execcommand runterminalcmd runcommand
  terminal applypatch editfile writefile createfile strreplace strreplaceeditor deletefile
`),
);

/** Planning and orchestration tools: neither investigation nor execution. */
const OTHER_TOOLS: ReadonlySet<string> = new Set(
  words(`
  task agent todowrite todoread exitplanmode enterplanmode askuserquestion skill slashcommand
  bashoutput killshell killbash
`),
);

/** Leading verbs of a read-only tool name (`mcp__github__get_issue`, `search_docs`). */
const READ_VERBS: ReadonlySet<string> = new Set(
  words(`
  read search get list find fetch query view show lookup look describe browse grep glob inspect
  retrieve recall ls cat check count explain status diff preview download
`),
);

/** Leading verbs of a tool name that changes something. */
const WRITE_VERBS: ReadonlySet<string> = new Set(
  words(`
  write create update delete remove edit set put post insert add apply run exec execute push
  send merge commit deploy move rename patch upload replace modify save close comment approve
  install build start stop restart kill reset drop publish trigger invoke call assign archive
  upsert store remember navigate click type fill submit
`),
);

/**
 * Whether a tool call investigated (reads, searches), executed (edits, writes, commands) or did
 * neither. In order: Claude Code's tool names (and common spellings of other agents, compared
 * lower-case without separators); planning tools (Task, TodoWrite, …) → other; any other call
 * that carries a command → execute; otherwise the first verb of the tool's own name — for MCP
 * tools the part after the last `__` (`mcp__github__get_issue` → `get`) — read / search / get /
 * list / find … → investigate, create / update / run … → execute; no known verb → other.
 */
export function classifyTool(call: {
  toolName: string;
  command?: string | null;
  mcp?: boolean;
}): ToolActivity {
  const normalized = call.toolName.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (!isMcpName(call.toolName, call.mcp)) {
    if (INVESTIGATE_TOOLS.has(normalized)) return 'investigate';
    if (EXECUTE_TOOLS.has(normalized)) return 'execute';
    if (OTHER_TOOLS.has(normalized)) return 'other';
    if (call.command !== null && call.command !== undefined && call.command.trim() !== '') {
      return 'execute';
    }
  }
  for (const word of toolNameWords(call.toolName)) {
    if (READ_VERBS.has(word)) return 'investigate';
    if (WRITE_VERBS.has(word)) return 'execute';
  }
  return 'other';
}

function isMcpName(toolName: string, mcp: boolean | undefined): boolean {
  return mcp === true || /^mcp__/i.test(toolName);
}

/** "mcp__github__getIssue" → ["get", "issue"]; "search_docs" → ["search", "docs"]. */
function toolNameWords(toolName: string): string[] {
  const separator = toolName.lastIndexOf('__');
  const own = separator >= 0 ? toolName.slice(separator + 2) : toolName;
  return own
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '' && word !== 'mcp');
}

/**
 * Annotates one episode. Rules (all deterministic):
 * - counts: `obsCount` every tool call of the range, `investigate` / `execute` by `classifyTool`,
 *   `failures` calls with outcome `error`;
 * - `hotFiles`: each call touches each of its distinct paths once; ranked by touches, then path;
 * - `durationMs`: first user prompt (else first prompt, else first call) to the last event;
 * - `toolsUsed`: by use count, then name; `participants`: user ids, then agent ids;
 * - `entities` (`extractEntityMentions`): user prompts (all kinds), base names of touched files,
 *   and error class names / files / tickets of error messages; ranked by mentions, then first seen;
 * - `outcome`: see `episodeOutcome`; `tags`: see `episodeTags`;
 * - `keyDecisions`: see `extractKeyDecisions`, over the user prompts in order;
 * - `intent`: the first user prompt of at least `terseWordCount` words, else the first non-empty
 *   user prompt, else null; truncated to `maxIntentChars`.
 */
export function annotateEpisode(
  input: EpisodeAnnotationInput,
  options: Partial<AnnotationOptions> = {},
): EpisodeAnnotation {
  const settings: AnnotationOptions = { ...DEFAULT_ANNOTATION_OPTIONS, ...options };
  const inRange = (promptId: number): boolean =>
    promptId >= input.firstPromptId && promptId <= input.lastPromptId;

  const prompts = dedupe(input.prompts.filter((prompt) => inRange(prompt.promptId))).sort(
    (a, b) => a.promptId - b.promptId || a.timestamp - b.timestamp,
  );
  const calls = dedupe(input.toolCalls.filter((call) => inRange(call.promptId))).sort(
    (a, b) => a.promptId - b.promptId || a.stepIndex - b.stepIndex || a.timestamp - b.timestamp,
  );
  const userPrompts = prompts.filter((prompt) => prompt.source === 'user');
  const validations = [...(input.validations ?? [])].sort((a, b) => a.timestamp - b.timestamp);
  const activities = calls.map((call) => classifyTool(call));

  const investigate = activities.filter((activity) => activity === 'investigate').length;
  const execute = activities.filter((activity) => activity === 'execute').length;
  const failures = calls.filter((call) => call.outcome === 'error').length;

  const { startedAt, lastEventAt } = episodeTimes(userPrompts, prompts, calls, validations);
  const outcome = episodeOutcome(calls, validations, input.closed);

  return {
    obsCount: calls.length,
    investigate,
    execute,
    failures,
    hotFiles: rankHotFiles(calls, settings.maxHotFiles),
    durationMs: startedAt === null || lastEventAt === null ? 0 : lastEventAt - startedAt,
    startedAt,
    lastEventAt,
    toolsUsed: rankTools(calls),
    participants: participantsOf(prompts, calls),
    entities: rankEntities(userPrompts, calls, settings.maxEntities),
    outcome,
    tags: episodeTags({ prompts, calls, activities, investigate, execute }, settings),
    keyDecisions: extractKeyDecisions(
      userPrompts.map((prompt) => prompt.text),
      settings,
    ),
    intent: representativeIntent(userPrompts, settings),
  };
}

/**
 * The outcome of an episode, in order:
 * 1. QA verdicts given → the last one (by time) decides: passed → `success`; failed → `partial`
 *    when an earlier validation passed, else `failure`;
 * 2. the episode has not closed → `ongoing`;
 * 3. no tool calls → `unknown`;
 * 4. otherwise the final state of the work: of the execute calls (all calls when there are none)
 *    the last one succeeded → `success`; it failed but an earlier one succeeded → `partial`; all
 *    failed → `failure`. (A failure that was fixed later does not make the episode a failure.)
 */
export function episodeOutcome(
  calls: readonly Pick<AnnotationToolCall, 'toolName' | 'command' | 'mcp' | 'outcome'>[],
  validations: readonly AnnotationValidation[],
  closed: boolean,
): AnnotationOutcome {
  if (validations.length > 0) {
    const ordered = [...validations].sort((a, b) => a.timestamp - b.timestamp);
    const last = ordered[ordered.length - 1];
    if (last.passed) return 'success';
    return ordered.some((validation) => validation.passed) ? 'partial' : 'failure';
  }
  if (!closed) return 'ongoing';
  if (calls.length === 0) return 'unknown';
  const executed = calls.filter((call) => classifyTool(call) === 'execute');
  const considered = executed.length > 0 ? executed : calls;
  if (considered[considered.length - 1].outcome === 'ok') return 'success';
  return considered.some((call) => call.outcome === 'ok') ? 'partial' : 'failure';
}

interface TagInput {
  prompts: readonly AnnotationPrompt[];
  calls: readonly AnnotationToolCall[];
  activities: readonly ToolActivity[];
  investigate: number;
  execute: number;
}

/**
 * Tags, in this order:
 * - `methodology:<name>` and `phase:<phase>` for each distinct methodology / methodology phase of
 *   the episode's prompts (lower-cased, first seen first);
 * - the dominant activity, when investigate + execute ≥ `minActivityForTag`:
 *   `investigate-heavy` (investigate ≥ ratio × execute), `execute-heavy` (the reverse) or `mixed`;
 * - `debugging`: an execute call failed and a later call of the same tool succeeded;
 * - `stuck-loop`: `stuckLoopLength` or more failed calls in a row;
 * - `discussion`: no tool calls at all (the episode was talk);
 * - `multi-agent`: more than one agent id.
 */
function episodeTags(input: TagInput, settings: AnnotationOptions): string[] {
  const tags: string[] = [];
  const add = (tag: string): void => {
    if (!tags.includes(tag)) tags.push(tag);
  };
  for (const prompt of input.prompts) {
    const methodology = prompt.methodology?.trim().toLowerCase();
    if (methodology) add(`methodology:${methodology}`);
  }
  for (const prompt of input.prompts) {
    const phase = prompt.methodologyPhase?.trim().toLowerCase();
    if (phase) add(`phase:${phase}`);
  }
  if (input.investigate + input.execute >= settings.minActivityForTag) {
    if (input.investigate >= settings.heavyActivityRatio * input.execute) add('investigate-heavy');
    else if (input.execute >= settings.heavyActivityRatio * input.investigate) add('execute-heavy');
    else add('mixed');
  }
  if (hasFixedFailure(input.calls, input.activities)) add('debugging');
  if (longestFailureRun(input.calls) >= settings.stuckLoopLength) add('stuck-loop');
  if (input.calls.length === 0) add('discussion');
  const agents = new Set([...input.prompts, ...input.calls].map((event) => event.agentId));
  if (agents.size > 1) add('multi-agent');
  return tags;
}

function hasFixedFailure(
  calls: readonly AnnotationToolCall[],
  activities: readonly ToolActivity[],
): boolean {
  const failedTools = new Set<string>();
  for (let i = 0; i < calls.length; i += 1) {
    const call = calls[i];
    if (call.outcome === 'error') {
      if (activities[i] === 'execute') failedTools.add(call.toolName);
    } else if (failedTools.has(call.toolName)) {
      return true;
    }
  }
  return false;
}

function longestFailureRun(calls: readonly AnnotationToolCall[]): number {
  let longest = 0;
  let run = 0;
  for (const call of calls) {
    run = call.outcome === 'error' ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

function episodeTimes(
  userPrompts: readonly AnnotationPrompt[],
  prompts: readonly AnnotationPrompt[],
  calls: readonly AnnotationToolCall[],
  validations: readonly AnnotationValidation[],
): { startedAt: number | null; lastEventAt: number | null } {
  const starts = userPrompts.length > 0 ? userPrompts : prompts.length > 0 ? prompts : calls;
  if (starts.length === 0) return { startedAt: null, lastEventAt: null };
  const startedAt = starts.reduce((min, event) => Math.min(min, event.timestamp), Infinity);
  const lastEventAt = [...prompts, ...calls, ...validations].reduce(
    (max, event) => Math.max(max, event.timestamp),
    startedAt,
  );
  return { startedAt, lastEventAt };
}

function rankHotFiles(calls: readonly AnnotationToolCall[], limit: number): AnnotationHotFile[] {
  const touches = new Map<string, number>();
  for (const call of calls) {
    const paths = new Set(call.filePaths.map((path) => path.trim()).filter((path) => path !== ''));
    for (const path of paths) touches.set(path, (touches.get(path) ?? 0) + 1);
  }
  return [...touches]
    .map(([path, count]) => ({ path, touches: count }))
    .sort((a, b) => b.touches - a.touches || compareText(a.path, b.path))
    .slice(0, Math.max(0, limit));
}

function rankTools(calls: readonly AnnotationToolCall[]): string[] {
  const uses = new Map<string, number>();
  for (const call of calls) uses.set(call.toolName, (uses.get(call.toolName) ?? 0) + 1);
  return [...uses]
    .sort(([nameA, usesA], [nameB, usesB]) => usesB - usesA || compareText(nameA, nameB))
    .map(([name]) => name);
}

function participantsOf(
  prompts: readonly AnnotationPrompt[],
  calls: readonly AnnotationToolCall[],
): string[] {
  const events = [...prompts, ...calls];
  const users = events.map((event) => event.userId).filter(isNonEmpty);
  const agents = events.map((event) => event.agentId).filter(isNonEmpty);
  return [...new Set([...users, ...agents])];
}

function rankEntities(
  userPrompts: readonly AnnotationPrompt[],
  calls: readonly AnnotationToolCall[],
  limit: number,
): string[] {
  const mentions: string[] = [];
  for (const prompt of userPrompts) {
    mentions.push(...extractEntityMentions(prompt.text).map((mention) => mention.value));
  }
  for (const call of calls) {
    for (const path of new Set(call.filePaths)) {
      const baseName = fileBaseName(path);
      if (baseName !== null) mentions.push(baseName);
    }
    if (call.errorMessage) {
      for (const mention of extractEntityMentions(call.errorMessage)) {
        if (mention.kind !== 'identifier') mentions.push(mention.value);
      }
    }
  }
  const counts = new Map<string, number>();
  const firstSeen = new Map<string, number>();
  mentions.forEach((mention, index) => {
    const key = entityKey(mention);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (!firstSeen.has(key)) firstSeen.set(key, index);
  });
  const score = (entity: string): [number, number] => {
    const key = entityKey(entity);
    return [counts.get(key) ?? 0, firstSeen.get(key) ?? 0];
  };
  return distinctEntities(mentions)
    .sort((a, b) => {
      const [countA, seenA] = score(a);
      const [countB, seenB] = score(b);
      return countB - countA || seenA - seenB;
    })
    .slice(0, Math.max(0, limit));
}

function representativeIntent(
  userPrompts: readonly AnnotationPrompt[],
  settings: AnnotationOptions,
): string | null {
  const texts = userPrompts.map((prompt) => prompt.text.trim()).filter((text) => text !== '');
  const chosen = texts.find((text) => wordCount(text) >= settings.terseWordCount) ?? texts[0];
  return chosen === undefined ? null : truncate(chosen, settings.maxIntentChars);
}

// Decision phrasing. Patterns run on a lower-cased sentence with typographic apostrophes made
// plain; a question is never a decision.
const DECISION_PATTERNS: readonly RegExp[] = [
  /\blet'?s\s+(?:just\s+)?(?:use|go\s+with|switch|stick\s+with|keep|drop|avoid|move\s+to|adopt|replace|not)\b/,
  /\b(?:we'?ll|we\s+will|i'?ll|i\s+will)\s+(?:go\s+with|use|stick\s+with|switch\s+to|keep)\b/,
  /\b(?:go|going)\s+with\b/,
  /\b(?:we|i)(?:\s+have|'ve)?\s+(?:decided|chose|agreed|settled)\b/,
  /\bdecision\s*:/,
  /\binstead\s+of\b/,
  /\brather\s+than\b/,
  /\bprefer\b.*\bover\b/,
  /\bfrom\s+now\s+on\b/,
  // An imperative "don't" / "do not" / "never" / "always" at the start of the sentence.
  /^(?:(?:please|and|but|so|also|ok|okay|then|just|oh|no|yes|remember)[,\s]+)*(?:don'?t|do\s+not|never|always)\b/,
  /\b(?:we|you)\s+(?:should\s+|must\s+)?(?:always|never)\b/,
  /\b(?:we|you)\s+(?:shouldn'?t|should\s+not|must\s+not|mustn'?t)\b/,
  /\b(?:we|you)\s+(?:don'?t|do\s+not)\s+(?:want|need|use)\b/,
  /\b(?:should|must)\s+(?:always|never)\b/,
  /\b(?:always|never)\s+(?:use|run|call|commit|push|import|add|write|put|keep|touch|edit|change|delete|merge)\b/,
];

const MIN_DECISION_WORDS = 3;

/**
 * Sentences of user prompts that assert a decision: "let's use X", "we'll go with", "decided",
 * "instead of", "rather than", "prefer … over", "from now on", an imperative "don't" / "never" /
 * "always" ("don't touch the migrations"), "we should always / never …". Questions and sentences
 * under 3 words are skipped. Sentences split at . ! ? followed by a space, and at line breaks;
 * list bullets are stripped. Whitespace collapsed, each cut to `maxDecisionChars`, distinct
 * (case- and apostrophe-insensitive), in prompt order, at most `maxKeyDecisions`.
 */
export function extractKeyDecisions(
  texts: readonly string[],
  options: Partial<Pick<AnnotationOptions, 'maxKeyDecisions' | 'maxDecisionChars'>> = {},
): string[] {
  const maxKeyDecisions = options.maxKeyDecisions ?? DEFAULT_ANNOTATION_OPTIONS.maxKeyDecisions;
  const maxChars = options.maxDecisionChars ?? DEFAULT_ANNOTATION_OPTIONS.maxDecisionChars;
  const decisions: string[] = [];
  const seen = new Set<string>();
  for (const text of texts) {
    for (const raw of text.split(/(?<=[.!?])\s+|\r?\n+/)) {
      if (decisions.length >= maxKeyDecisions) return decisions;
      const sentence = raw
        .replace(/^\s*(?:[-*•>]|\d+[.)])\s+/, '')
        .replace(/\s+/g, ' ')
        .trim();
      if (sentence === '' || sentence.endsWith('?')) continue;
      if (wordCount(sentence) < MIN_DECISION_WORDS) continue;
      const normalized = sentence.toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'");
      if (!DECISION_PATTERNS.some((pattern) => pattern.test(normalized))) continue;
      if (seen.has(normalized)) continue;
      seen.add(normalized);
      decisions.push(truncate(sentence, maxChars));
    }
  }
  return decisions;
}

function dedupe<T extends { eventId?: string }>(events: readonly T[]): T[] {
  const seen = new Set<string>();
  return events.filter((event) => {
    if (event.eventId === undefined) return true;
    if (seen.has(event.eventId)) return false;
    seen.add(event.eventId);
    return true;
  });
}

function truncate(text: string, maxChars: number): string {
  const characters = Array.from(text);
  if (characters.length <= maxChars) return text;
  return `${characters
    .slice(0, Math.max(0, maxChars - 1))
    .join('')
    .trimEnd()}…`;
}

/** Whitespace-separated words of a template literal. */
function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

function isNonEmpty(value: string | null): value is string {
  return value !== null && value.trim() !== '';
}

/** Locale-independent string order (UTF-16 code units). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
