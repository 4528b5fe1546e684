import type { ToolKind } from './tool-kinds';

/**
 * Everything the signal detector keeps for one session. Plain JSON (records and arrays, no Maps,
 * no class instances) so the service can persist it to a compacted changelog after each batch and
 * restore it after a crash; every list is bounded so a long session cannot grow it without end.
 */
export interface DetectorState {
  tenantId: string;
  projectId: string;
  sessionId: string;
  projectRoot: string | null;
  startedAt: number | null;
  lastAt: number;
  /** Distinct tool calls seen (duplicates excluded). */
  callCount: number;
  maxStep: number;
  /** Recent eventIds, newest last: a redelivered call changes nothing. */
  recentEventIds: string[];
  files: Record<string, FileState>;
  /** Reads and edits inside the co-access window. */
  recentTouches: TouchRecord[];
  /** Unordered pairs already co-accessed this session (`a\u0000b`, sorted). */
  coAccessPairs: Record<string, true>;
  /** Activity of the last steps: what happened between two edits of a file. */
  activity: ActivityRecord[];
  openErrors: Record<string, OpenError>;
  errorKeysSeen: Record<string, true>;
  recentErrors: Array<{ step: number; normalisedError: string }>;
  sequenceSteps: SequenceStep[];
  sequenceKeysSeen: string[];
  tokensByModule: Record<string, number>;
  totalTokens: number;
  /**
   * The agent's plan (issue #20): step counts of its first and latest todo list. Optional: states
   * persisted before plans were observed have none.
   */
  plan?: PlanState;
  /**
   * Steps an orchestrator planned for the session's task (TaskClassified.plannedSteps; issue #20).
   * Optional, like `plan`.
   */
  orchestratorPlannedSteps?: number;
  /** The QA agent's browser, as its MCP tools showed it (optional, like `plan`). */
  browser?: BrowserState;
}

export interface PlanState {
  /** Steps of the session's first plan: what the agent expected the work to take. */
  plannedSteps: number;
  /** Steps of its latest plan: the work as it turned out (items added or dropped). */
  latestSteps: number;
}

export interface BrowserState {
  /** The last page URL the browser tools named (without query or fragment). */
  page: string | null;
  /** The browser action that failed last and has not succeeded since. */
  failed: BrowserFailure | null;
  /**
   * The successful actions since the last state check or failure (test_sequence), at most a few,
   * newest last. Optional: browser states persisted before test sequences were observed have none.
   */
  run?: BrowserRunStep[];
}

export interface BrowserRunStep {
  /** `fill "Password textbox"`: the action and its target, never a typed value. */
  step: string;
  /** The page the browser was on before the step (where a sequence cut at its cap starts). */
  from: string | null;
}

export interface BrowserFailure {
  mcpTool: string;
  action: string;
  target: string | null;
  /** `action target`: a later call with the same key is a retry. */
  key: string;
  page: string | null;
  /** The error's first line. */
  message: string;
  files: string[];
  sessionId: string;
  eventId: string;
  at: number;
  stepIndex: number;
  promptId: number;
  /** Browser actions done since (`click "Accept cookies"`), at most a few. */
  since: string[];
}

export interface FileState {
  module: string;
  reads: number;
  edits: number;
  firstReadAt: number | null;
  lastAccessStep: number;
  lastEditStep: number | null;
  anomalyEmitted: boolean;
  backtracked: boolean;
  /** Step of the first edit since the last revert: where the current approach began. */
  approachStartStep: number | null;
  /**
   * Hashes of the edits since the approach began, `old→new`; an edit that inverts the top one pops
   * it, and an empty stack after a pop means the file is back to where the approach started.
   * `null` once a whole-file write made inversion undetectable.
   */
  editStack: string[] | null;
}

export interface TouchRecord {
  file: string;
  step: number;
  at: number;
  eventId: string;
}

export interface ActivityRecord {
  step: number;
  kind: ToolKind | 'error';
  files: string[];
}

export interface OpenError {
  errorKey: string;
  toolName: string;
  normalisedError: string;
  sampleMessage: string;
  occurrences: number;
  firstStep: number;
  lastStep: number;
  lastPromptId: number;
  lastAt: number;
  /** What the failing call aimed at: command head or file list; a success on it resolves. */
  target: string;
  /** Command (or args hash) of the last failure, to tell "changed arguments" from "retried". */
  lastArgs: string;
  files: string[];
  editedSinceFailure: string[];
  eventIds: string[];
}

export interface SequenceStep {
  tool: string;
  file: string | null;
  module: string | null;
  step: number;
  eventId: string;
}

export const RECENT_EVENT_IDS = 256;
export const MAX_ACTIVITY = 32;
export const MAX_RECENT_ERRORS = 32;
export const MAX_ERROR_EVENT_IDS = 20;
export const MAX_SEQUENCE_KEYS = 2_000;
export const MAX_FILES_PER_SIGNAL = 20;

export function newDetectorState(
  session: { tenantId: string; projectId: string; sessionId: string },
  projectRoot: string | null,
): DetectorState {
  return {
    tenantId: session.tenantId,
    projectId: session.projectId,
    sessionId: session.sessionId,
    projectRoot,
    startedAt: null,
    lastAt: 0,
    callCount: 0,
    maxStep: -1,
    recentEventIds: [],
    files: {},
    recentTouches: [],
    coAccessPairs: {},
    activity: [],
    openErrors: {},
    errorKeysSeen: {},
    recentErrors: [],
    sequenceSteps: [],
    sequenceKeysSeen: [],
    tokensByModule: {},
    totalTokens: 0,
  };
}

/** Appends and drops the oldest entries beyond `limit`. */
export function pushBounded<T>(list: T[], item: T, limit: number): void {
  list.push(item);
  if (list.length > limit) list.splice(0, list.length - limit);
}

/** Appends unless present, keeping at most `limit` entries. */
export function addUnique(list: string[], item: string, limit: number): void {
  if (!list.includes(item) && list.length < limit) list.push(item);
}

/** A deep copy (the state is JSON by contract). */
export function cloneDetectorState(state: DetectorState): DetectorState {
  return structuredClone(state);
}
