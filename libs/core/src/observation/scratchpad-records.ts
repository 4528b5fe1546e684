import type { MemoryType, WorkUnitRef } from '@engram/contracts';

/** The agent's remember_this (RememberRequested), held until its work validates. */
export interface ScratchpadNote {
  eventId: string;
  sessionId: string;
  at: number;
  text: string;
  /** Null: classified from the text at promotion. */
  memoryType: MemoryType | null;
  relatedFiles: string[];
}

/** A CommitMade: its SHA is attached to promoted memories about the files it changed. */
export interface ScratchpadCommit {
  eventId: string;
  sessionId: string;
  at: number;
  sha: string;
  /** Changed files and the new names of renamed ones. */
  files: string[];
}

/** One issue of a QA report (ValidationFailed / ValidationPassed). */
export interface ScratchpadQaIssue {
  eventId: string;
  sessionId: string;
  at: number;
  workUnitRef: WorkUnitRef | null;
  severity: string;
  description: string;
  file: string | null;
  module: string | null;
  whatWasTried: string | null;
  recommendation: string | null;
}
