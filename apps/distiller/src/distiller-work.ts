import type {
  DistillationWindow,
  DistillerInputOffsets,
  DistillerSession,
  DistillerSessionProgress,
} from '@engram/core';
import type { DistilledRecord } from './distiller-records';

// One transaction of the distiller (a batch, or a timer run): what it works on and what it writes.

/** A session as one transaction works on it. */
export interface WorkingSession {
  partition: number;
  session: DistillerSession;
  changed: boolean;
}

/** Everything one transaction (a batch, or a timer run) changes; dropped if it aborts. */
export class Work {
  readonly sessions = new Map<string, WorkingSession>();
  /** Input partitions this batch consumes up to (exclusive), committed with it. */
  readonly consumed = new Map<number, DistillerInputOffsets>();
  readonly windows: DistillationWindow[] = [];
  readonly distilled = new Map<string, DistilledRecord>();
  readonly dropped = new Set<string>();
  readonly expiredKeys: { key: string; partition: number }[] = [];
  events = 0;
}

export interface StagedWrite {
  partition: number;
  key: string;
  value: Buffer | null;
  /** What the in-memory index keeps of a session written (null: the session is gone). */
  progress?: DistillerSessionProgress | null;
  /** The trigger time of a dedupe key written. */
  at?: number;
}

/** What the distiller counts (logs, metrics, tests). */
export interface DistillerCounters {
  /** Input events committed (prompts, tool calls, lifecycle events, boundaries). */
  events: number;
  prompts: number;
  toolCalls: number;
  triggers: number;
  distilled: number;
  skipped: number;
  duplicates: number;
  /** Memories distilled: the work states written and the fact candidates sent to the merge. */
  memories: number;
  /** Of those, the fact versions written to the candidates topic (MemoryMergeStage's input). */
  candidates: number;
  sessionsDropped: number;
}

export const NOTHING: DistillerInputOffsets = { prompts: 0, toolCalls: 0, boundaries: 0 };

export function maxOffsets(
  a: DistillerInputOffsets,
  b: DistillerInputOffsets,
): DistillerInputOffsets {
  return {
    prompts: Math.max(a.prompts, b.prompts),
    toolCalls: Math.max(a.toolCalls, b.toolCalls),
    boundaries: Math.max(a.boundaries, b.boundaries),
  };
}
