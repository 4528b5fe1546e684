import type {
  CommitMade,
  EventEnvelope,
  RememberRequested,
  TaskClassified,
  TaskComplexity,
  WorkUnitRef,
} from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { pushBounded, RECENT_EVENT_IDS } from './detector-state';
import { normaliseProjectPath, PROJECT_ROOT_PATH } from './project-paths';
import type { ScratchpadCommit, ScratchpadNote, ScratchpadQaIssue } from './scratchpad-records';
import type { SegmentDigest } from './segment-digest';
import type { DeadEndSignal, ObserverSignal } from './signals';

export type SegmentStatus = 'open' | 'validated' | 'failed' | 'promoted';

/**
 * A stretch of work between two validation verdicts: the signals and notes of one subtask
 * attempt. SubtaskValidated closes the open segment as that subtask's (validated or failed).
 */
export interface ScratchpadSegment {
  segmentId: number;
  workUnitRef: WorkUnitRef | null;
  status: SegmentStatus;
  signals: ObserverSignal[];
  notes: ScratchpadNote[];
  openedAt: number;
  closedAt: number | null;
  /** Set when promoted (the signals are then dropped). */
  digest: SegmentDigest | null;
  /**
   * Tool calls of the attempt (`countToolCall`), kept when the signals are dropped: the work
   * unit outcome's `stepsTaken`. Absent in segments written before calls were counted.
   */
  calls?: number;
}

/**
 * The observer's scratchpad (seed 002 §5, §8): everything observed for one unit of work,
 * waiting for validation. Keyed by the spec-level work unit when the work has one (its sessions
 * — planner, coders, QA — share it), else by the session. Plain JSON, for a compacted topic.
 */
export interface Scratchpad {
  scratchpadId: string;
  tenantId: string;
  projectId: string;
  /** The work unit's root (hierarchy[0]); null for a session's own scratchpad. */
  workUnitRoot: WorkUnitRef | null;
  sessionIds: string[];
  endedSessionIds: string[];
  complexity: TaskComplexity | null;
  subtaskCount: number | null;
  validatedSubtasks: string[];
  segments: ScratchpadSegment[];
  nextSegmentId: number;
  /** Dead ends of failed attempts: the knowledge a failure leaves, promoted once work validates. */
  carriedDeadEnds: DeadEndSignal[];
  commits: ScratchpadCommit[];
  /** QA issues not promoted yet. */
  qaIssues: ScratchpadQaIssue[];
  everValidated: boolean;
  promotedCount: number;
  consolidated: boolean;
  lastActivityAt: number;
  recentEventIds: string[];
  /** Tool calls since the last segment closed, not in a segment yet: the next one's. */
  uncountedCalls?: number;
}

/** The scratchpad a session's events go to: its work unit's (root), else its own. */
export function scratchpadIdOf(
  event: Pick<EventEnvelope, 'tenantId' | 'projectId' | 'sessionId'>,
  workUnitRef: WorkUnitRef | null,
): string {
  const root = workUnitRef?.hierarchy[0];
  return root !== undefined
    ? idOf('scratchpad', event.tenantId, event.projectId, workUnitRef!.methodology, root)
    : idOf('scratchpad', event.tenantId, event.projectId, 'session', event.sessionId);
}

export function newScratchpad(
  event: Pick<EventEnvelope, 'tenantId' | 'projectId' | 'sessionId' | 'timestamp'>,
  workUnitRef: WorkUnitRef | null,
): Scratchpad {
  const root = workUnitRef?.hierarchy[0];
  return {
    scratchpadId: scratchpadIdOf(event, workUnitRef),
    tenantId: event.tenantId,
    projectId: event.projectId,
    workUnitRoot:
      root !== undefined
        ? { methodology: workUnitRef!.methodology, hierarchy: [root], label: workUnitRef!.label }
        : null,
    sessionIds: [event.sessionId],
    endedSessionIds: [],
    complexity: null,
    subtaskCount: null,
    validatedSubtasks: [],
    segments: [],
    nextSegmentId: 0,
    carriedDeadEnds: [],
    commits: [],
    qaIssues: [],
    everValidated: false,
    promotedCount: 0,
    consolidated: false,
    lastActivityAt: event.timestamp,
    recentEventIds: [],
  };
}

/** True (and remembered) the first time an eventId reaches the scratchpad. */
export function firstDelivery(pad: Scratchpad, eventId: string): boolean {
  if (pad.recentEventIds.includes(eventId)) return false;
  pushBounded(pad.recentEventIds, eventId, RECENT_EVENT_IDS);
  return true;
}

/** The open segment, opened on demand. */
export function openSegment(pad: Scratchpad, at: number): ScratchpadSegment {
  const last = pad.segments[pad.segments.length - 1];
  if (last !== undefined && last.status === 'open' && last.closedAt === null) return last;
  const segment: ScratchpadSegment = {
    segmentId: pad.nextSegmentId,
    workUnitRef: null,
    status: 'open',
    signals: [],
    notes: [],
    openedAt: at,
    closedAt: null,
    digest: null,
  };
  // The calls that came before the segment's first signal are its attempt's too.
  if ((pad.uncountedCalls ?? 0) > 0) {
    segment.calls = pad.uncountedCalls;
    delete pad.uncountedCalls;
  }
  pad.nextSegmentId += 1;
  pad.segments.push(segment);
  return segment;
}

/**
 * One tool call of the pad's work, counted in the open segment (or held for the next one: a
 * segment opens with its first signal). Not activity: idleness stays the signals' and verdicts'.
 */
export function countToolCall(pad: Scratchpad): void {
  const last = pad.segments[pad.segments.length - 1];
  if (last !== undefined && last.status === 'open' && last.closedAt === null) {
    last.calls = (last.calls ?? 0) + 1;
  } else {
    pad.uncountedCalls = (pad.uncountedCalls ?? 0) + 1;
  }
}

export function addSignals(
  pad: Scratchpad,
  sessionId: string,
  signals: readonly ObserverSignal[],
  at: number,
): void {
  touch(pad, sessionId, at);
  if (signals.length > 0) openSegment(pad, at).signals.push(...signals);
}

/** The agent's remember_this: held in the open segment, so a failed attempt discards it too. */
export function addNote(
  pad: Scratchpad,
  event: RememberRequested,
  projectRoot: string | null,
): void {
  if (!firstDelivery(pad, event.eventId)) return;
  touch(pad, event.sessionId, event.timestamp);
  openSegment(pad, event.timestamp).notes.push({
    eventId: event.eventId,
    sessionId: event.sessionId,
    at: event.timestamp,
    text: event.text,
    memoryType: event.memoryType,
    relatedFiles: placeablePaths(event.relatedFiles, projectRoot),
  });
}

/** A commit's SHA, to attach to memories about the files it changed (seed 002 §8). */
export function addCommit(pad: Scratchpad, event: CommitMade, projectRoot: string | null): void {
  if (!firstDelivery(pad, event.eventId)) return;
  touch(pad, event.sessionId, event.timestamp);
  const files = [...event.changedFiles, ...event.renamedFiles.map((r) => r.to)];
  pad.commits.push({
    eventId: event.eventId,
    sessionId: event.sessionId,
    at: event.timestamp,
    sha: event.sha,
    files: placeablePaths(files, projectRoot),
  });
}

/** The task's complexity decides the promotion cap. */
export function setComplexity(pad: Scratchpad, event: TaskClassified): void {
  if (!firstDelivery(pad, event.eventId)) return;
  touch(pad, event.sessionId, event.timestamp);
  pad.complexity = event.complexity;
}

export function touch(pad: Scratchpad, sessionId: string, at: number): void {
  if (!pad.sessionIds.includes(sessionId)) pad.sessionIds.push(sessionId);
  pad.lastActivityAt = Math.max(pad.lastActivityAt, at);
}

/** Paths normalised like the detector's; ones outside the project are dropped. */
export function placeablePaths(paths: readonly string[], projectRoot: string | null): string[] {
  const placed = new Set<string>();
  for (const path of paths) {
    try {
      const placedPath = normaliseProjectPath(path, projectRoot);
      if (placedPath !== PROJECT_ROOT_PATH) placed.add(placedPath);
    } catch {
      // Outside the project (or unplaceable): not a file a memory may name.
    }
  }
  return [...placed];
}
