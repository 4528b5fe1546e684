import type { E2eObservationType } from '@engram/contracts';
import type { ToolKind } from './tool-kinds';

/**
 * The observer's behavioural signals (seed 002 §5 "Signal Taxonomy", SPEC §5), plus `dead_end`,
 * the full-revert proxy of seed 002 §15 Q3. Signals are plain JSON: they live in scratchpads and
 * changelogs. Every signal names the tool-call events it came from (provenance) and carries a
 * deterministic id, so a redelivered call yields the same signal.
 */
export type SignalType =
  | 'file_access'
  | 'co_access'
  | 'error_retry'
  | 'backtrack'
  | 'sequence'
  | 'time_anomaly'
  | 'dead_end'
  | 'e2e_observation';

interface SignalBase {
  signalId: string;
  sessionId: string;
  /** Event time of the call that completed the signal. */
  at: number;
  stepIndex: number;
  promptId: number;
  /** eventIds of the tool calls the signal was derived from. */
  eventIds: string[];
}

export interface FileAccessSignal extends SignalBase {
  type: 'file_access';
  filePath: string;
  module: string;
  toolName: string;
  access: ToolKind;
  /** The session's first access of this file (drives "sessions touching" counts). */
  firstInSession: boolean;
}

export type CoAccessDirection = 'a_then_b' | 'same_step';

/** Two files touched within the co-access window; `fileA` is the earlier one. */
export interface CoAccessSignal extends SignalBase {
  type: 'co_access';
  fileA: string;
  fileB: string;
  stepDelta: number;
  timeDeltaMs: number;
  direction: CoAccessDirection;
  /** The session's first co-access of this (unordered) pair. */
  firstInSession: boolean;
}

export type ErrorResolution =
  'edited_files' | 'changed_arguments' | 'retried_unchanged' | 'unresolved';

/** A failing tool call, its repeats with the same normalised error, and how it ended. */
export interface ErrorRetrySignal extends SignalBase {
  type: 'error_retry';
  toolName: string;
  errorKey: string;
  normalisedError: string;
  /** The last raw message (already redacted upstream), truncated. */
  sampleMessage: string;
  /** How many times the error occurred before it was resolved (or the session ended). */
  occurrences: number;
  resolution: ErrorResolution;
  resolvedHow: string | null;
  /** Files named by the failing call. */
  files: string[];
  /** Files edited between the last failure and the success. */
  editedFiles: string[];
  firstInSession: boolean;
}

export type BacktrackCause = 'wrong_assumption' | 'missing_context' | 'cascading_change';

/** A file edited again within the backtrack window. */
export interface BacktrackSignal extends SignalBase {
  type: 'backtrack';
  filePath: string;
  module: string;
  reEditedWithinSteps: number;
  likelyCause: BacktrackCause;
  /** Files edited (cascading) or read (missing context) between the two edits. */
  relatedFiles: string[];
  firstInSession: boolean;
}

/** A tool n-gram (successful calls only) in a module's scope; first occurrence per session. */
export interface SequenceSignal extends SignalBase {
  type: 'sequence';
  /** `module|Tool>Tool>…`: the same steps in the same module in another session match it. */
  sequenceKey: string;
  toolSequence: string[];
  /** The first file of each step, null for steps without files (canonical files of a recipe). */
  files: (string | null)[];
  module: string;
}

/** A file read again and again without being edited: hard to understand, or hard to find in. */
export interface TimeAnomalySignal extends SignalBase {
  type: 'time_anomaly';
  filePath: string;
  module: string;
  readCount: number;
  /** From the first read to the read that crossed the threshold. */
  dwellMs: number;
}

export type DeadEndTrigger = 'full_revert' | 'abandoned_after_steps';

/**
 * An approach undone: edits to files fully reverted (`git checkout -- f`, `git restore`,
 * `git reset --hard`, `git stash`, or edits that exactly invert the earlier ones). Reverting an
 * approach of `deadEndMinSteps`+ steps is the seed's "20+ steps then a different approach".
 */
export interface DeadEndSignal extends SignalBase {
  type: 'dead_end';
  trigger: DeadEndTrigger;
  revertedFiles: string[];
  /** Every file edited since the approach began. */
  approachFiles: string[];
  approachStartStep: number;
  stepsSpent: number;
  revertCommand: string | null;
  /** Normalised errors seen while the approach was tried: why it was likely abandoned. */
  errorsSeen: string[];
}

/**
 * What a browser automation MCP tool (a QA agent's Playwright, Puppeteer, Electron…) showed that is
 * worth remembering (seed 002 §9): a failure, a wait, a step that was needed first, a page that
 * reported an error. Routine successes make no signal.
 */
export interface E2eObservationSignal extends SignalBase {
  type: 'e2e_observation';
  observationType: E2eObservationType;
  /** The MCP tool's full name (`mcp__playwright__browser_click`). */
  mcpTool: string;
  /** navigate, click, fill, key, select, hover, wait, inspect, evaluate, or the tool's own name. */
  action: string;
  /** What the action aimed at: an element, selector, text, key or URL (null: none named). */
  target: string | null;
  /** The page the browser was on (the session's last known URL, without query), or null. */
  page: string | null;
  /** What happened, one line: the error, or what the page said. */
  outcome: string;
  /** For preconditions: the actions that had to come first (`click "Accept cookies"`). */
  before: string[];
  /** Files the call named (components, test files), when any. */
  files: string[];
}

export type ObserverSignal =
  | FileAccessSignal
  | CoAccessSignal
  | ErrorRetrySignal
  | BacktrackSignal
  | SequenceSignal
  | TimeAnomalySignal
  | DeadEndSignal
  | E2eObservationSignal;

/** Files a signal is about (used to drop the signals of an abandoned approach). */
export function filesOfSignal(signal: ObserverSignal): string[] {
  switch (signal.type) {
    case 'file_access':
    case 'backtrack':
    case 'time_anomaly':
      return [signal.filePath];
    case 'co_access':
      return [signal.fileA, signal.fileB];
    case 'error_retry':
    case 'e2e_observation':
      return signal.files;
    case 'sequence':
      return signal.files.filter((file): file is string => file !== null);
    case 'dead_end':
      return signal.approachFiles;
  }
}
