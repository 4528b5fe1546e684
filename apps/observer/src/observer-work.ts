import type { Memory } from '@engram/contracts';
import type { EndedSessionRecord, SessionRecord } from './observer-records';
import type { Scratchpad, SeenEvents, SessionSignalDetector } from '@engram/core';
import { emptyProjectWork, projectKeyOf, type ProjectWork } from './project-work';
import type { FactChanges } from './session-facts';

// One transaction of the observer (a batch, or a timer run): what it works on and what it writes.

/** What the stage keeps in memory of each committed session, to find work without decoding. */
export interface SessionIndexEntry {
  partition: number;
  lastActivityAt: number;
  pending: number;
}

/** What the stage keeps in memory of each ended session's record, to drop it in time. */
export interface EndedIndexEntry {
  partition: number;
  lastActivityAt: number;
}

/** A session as one transaction works on it. */
export interface WorkingSession {
  record: SessionRecord;
  detector: SessionSignalDetector;
  /** The events applied to this run (changes `record.seen`). */
  seen: SeenEvents;
  changes: FactChanges;
  changed: boolean;
  ended: boolean;
}

/** An ended session's record as one transaction works on it. */
export interface WorkingEnded {
  record: EndedSessionRecord;
  seen: SeenEvents;
  changed: boolean;
  removed: boolean;
}

export interface WorkingPad {
  partition: number;
  pad: Scratchpad;
  changed: boolean;
  removed: boolean;
}

/** Everything one transaction (a batch, or a timer run) changes; dropped if it aborts. */
export class Work {
  readonly sessions = new Map<string, WorkingSession>();
  readonly pads = new Map<string, WorkingPad>();
  /** Ended sessions' records loaded (null: none), by sessionId. */
  readonly ended = new Map<string, WorkingEnded | null>();
  /** Tool-calls partitions consumed up to (exclusive) by this batch. */
  readonly consumed = new Map<number, number>();
  /** For the project stage, by project key. */
  readonly projects = new Map<string, ProjectWork>();
  /** Work units' outcome memories, by memoryId (a later verdict in the batch replaces one). */
  readonly memories = new Map<string, Memory>();

  projectOf(scope: { tenantId: string; projectId: string }): ProjectWork {
    const key = projectKeyOf(scope);
    let work = this.projects.get(key);
    if (!work) {
      work = emptyProjectWork(scope.tenantId, scope.projectId);
      this.projects.set(key, work);
    }
    return work;
  }
}

export interface StagedWrite {
  partition: number;
  key: string;
  value: Buffer | null;
  /** For `session:` keys: the index entry (null: gone); for `ended:` keys: the ended entry. */
  index: SessionIndexEntry | EndedIndexEntry | null;
}

/** What the observer counts (logs, metrics, tests). */
export interface ObserverCounters {
  toolCalls: number;
  duplicates: number;
  lifecycleEvents: number;
  signals: number;
  rejectedPaths: number;
  graphBatches: number;
  sessionsEnded: number;
  sessionsExpired: number;
  /** Ended sessions' records dropped after `endedSessionRetentionMs`. */
  endedSessionsForgotten: number;
  promotionTriggers: number;
  /** ProjectWork records committed for the project stage. */
  projectWorks: number;
  /** FileManifests swept against the project's memories, and the memory paths found absent. */
  manifestsSwept: number;
  manifestAbsentPaths: number;
  /** work_unit_outcome memories recorded (in transforms: a redone transaction counts again). */
  workUnitOutcomes: number;
}
