import type { EventEnvelope, WorkUnitRef } from './envelope';
import type { MemoryType } from './memory';

export const TASK_COMPLEXITIES = ['trivial', 'standard', 'complex'] as const;
export type TaskComplexity = (typeof TASK_COMPLEXITIES)[number];

// `agent.lifecycle.v1` is a top-level Avro union of the records below.

export interface SessionStarted extends EventEnvelope {
  /** claude-code, codex, aider, … */
  agentKind: string | null;
  gitBranch: string | null;
  gitHeadSha: string | null;
  methodology: string | null;
  workUnitRef: WorkUnitRef | null;
}

export interface SessionEnded extends EventEnvelope {
  userMessageCount: number;
  durationS: number;
  /** exit, shutdown, timeout, … */
  reason: string | null;
}

export interface CompactionPending extends EventEnvelope {
  /** First prompt still in the agent's context window. */
  firstPromptId: number | null;
  lastPromptId: number | null;
  tokenCount: number | null;
}

/** One issue of a QA report (seed 002 §8). */
export interface QaIssue {
  /** critical, high, medium, low, … */
  severity: string;
  description: string;
  file: string | null;
  module: string | null;
  whatWasTried: string | null;
  recommendation: string | null;
}

export interface ValidationPassed extends EventEnvelope {
  workUnitRef: WorkUnitRef | null;
  summary: string | null;
  /** Non-blocking issues. */
  issues: QaIssue[];
}

export interface ValidationFailed extends EventEnvelope {
  workUnitRef: WorkUnitRef | null;
  summary: string | null;
  issues: QaIssue[];
}

export interface SubtaskValidated extends EventEnvelope {
  workUnitRef: WorkUnitRef;
  succeeded: boolean;
  /** Subtasks in the whole spec, when known (incremental promotion above 5). */
  subtaskCount: number | null;
}

export interface RenamedFile {
  from: string;
  to: string;
}

export interface CommitMade extends EventEnvelope {
  sha: string;
  /** Added or modified files. */
  changedFiles: string[];
  renamedFiles: RenamedFile[];
  deletedFiles: string[];
  message: string | null;
  branch: string | null;
}

/** The agent's `remember_this`. */
export interface RememberRequested extends EventEnvelope {
  text: string;
  /**
   * Null: classified from the text. SPEC §3 calls it `type`; renamed because `type` is the record
   * tag of replay lines (SPEC §12).
   */
  memoryType: MemoryType | null;
  relatedFiles: string[];
}

/** The tracked files of the project at HEAD. */
export interface FileManifest extends EventEnvelope {
  headSha: string | null;
  files: string[];
}

export interface TaskClassified extends EventEnvelope {
  complexity: TaskComplexity;
  workUnitRef: WorkUnitRef | null;
  taskDescription: string | null;
  /**
   * Steps the orchestrator planned for the task (issue #20), for task_calibration. Optional in
   * TypeScript because it was added after v1 (Avro default null): producers that predate it omit
   * it, records written before it decode with null.
   */
  plannedSteps?: number | null;
}
