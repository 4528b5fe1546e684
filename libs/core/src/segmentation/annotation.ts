import { distinctEntities, entityKey, extractEntityMentions, fileBaseName } from './entities';
import { wordCount } from './intent-keywords';
import {
  DEFAULT_ANNOTATION_OPTIONS,
  type AnnotationHotFile,
  type AnnotationOptions,
  type AnnotationOutcome,
  type AnnotationPrompt,
  type AnnotationToolCall,
  type AnnotationValidation,
  type EpisodeAnnotation,
  type EpisodeAnnotationInput,
} from './annotation-types';
import { classifyTool, type ToolActivity } from './tool-activity';

/**
 * Episode annotation (seed 000 "Observation annotation", SPEC §4.4, seed 003 structured
 * metadata): what happened during an episode, computed from the tool calls and prompts of its
 * prompt range when it closes. Descriptive, not prescriptive — it never moves a boundary.
 * Pure and deterministic: the same input in any order gives the same, ordered output.
 *
 * Its types and settings are in annotation-types.ts, the classification of tools in
 * tool-activity.ts.
 */

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

function isNonEmpty(value: string | null): value is string {
  return value !== null && value.trim() !== '';
}

/** Locale-independent string order (UTF-16 code units). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
