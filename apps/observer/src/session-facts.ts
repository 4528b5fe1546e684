import { idOf, pairKeyOf, type DetectorState, type ObserverSignal } from '@engram/core';
import type {
  GraphErrorRow,
  GraphSessionPairRow,
  GraphTouchRow,
  ObserverGraphBatch,
} from '@engram/core';

/**
 * What one session contributed to the graph so far, as absolute values (SPEC §5): the graph
 * stores them per session, so writing them again changes nothing (see observer-graph.cypher.ts).
 * Plain JSON, kept in the session's changelog record.
 */
export interface SessionFacts {
  files: Record<string, FileFact>;
  /** Keyed by `pairKeyOf(a, b)`. */
  pairs: Record<string, PairFact>;
  /** Keyed by the detector's error key (tool + normalised message). */
  errors: Record<string, ErrorFact>;
}

export interface FileFact {
  module: string;
  accesses: number;
  firstAt: number;
  lastAt: number;
}

/** The core's CoAccessPairStat for one session (fileA < fileB). */
export interface PairFact {
  fileA: string;
  fileB: string;
  rawCount: number;
  timeDeltaSumMs: number;
  timedCount: number;
  aThenB: number;
  bThenA: number;
  sameStep: number;
  lastObservedAt: number;
}

export interface ErrorFact {
  toolName: string;
  normalisedError: string;
  sampleMessage: string;
  occurrences: number;
  episodes: number;
  resolvedEpisodes: number;
  lastResolution: string | null;
  lastSeenAt: number;
}

/** What a batch changed in one session's facts: these become the batch's graph rows. */
export interface FactChanges {
  files: Set<string>;
  /** Files the session touched for the first time (their edges' weights change). */
  newFiles: Set<string>;
  pairs: Set<string>;
  errors: Set<string>;
}

export function emptyFacts(): SessionFacts {
  return { files: {}, pairs: {}, errors: {} };
}

export function noChanges(): FactChanges {
  return { files: new Set(), newFiles: new Set(), pairs: new Set(), errors: new Set() };
}

/** Folds one signal into the session's facts (the per-session half of the core's fold). */
export function applySignal(facts: SessionFacts, signal: ObserverSignal, changes: FactChanges) {
  switch (signal.type) {
    case 'file_access': {
      const file = facts.files[signal.filePath];
      if (file === undefined) {
        facts.files[signal.filePath] = {
          module: signal.module,
          accesses: 1,
          firstAt: signal.at,
          lastAt: signal.at,
        };
        changes.newFiles.add(signal.filePath);
      } else {
        file.accesses += 1;
        file.firstAt = Math.min(file.firstAt, signal.at);
        file.lastAt = Math.max(file.lastAt, signal.at);
      }
      changes.files.add(signal.filePath);
      return;
    }
    case 'co_access': {
      // As the core's applyCoAccess: same_step, or in the order the signal saw the two files.
      const key = pairKeyOf(signal.fileA, signal.fileB);
      const [fileA, fileB] =
        signal.fileA < signal.fileB ? [signal.fileA, signal.fileB] : [signal.fileB, signal.fileA];
      const pair = (facts.pairs[key] ??= {
        fileA,
        fileB,
        rawCount: 0,
        timeDeltaSumMs: 0,
        timedCount: 0,
        aThenB: 0,
        bThenA: 0,
        sameStep: 0,
        lastObservedAt: 0,
      });
      pair.rawCount += 1;
      pair.timeDeltaSumMs += signal.timeDeltaMs;
      pair.timedCount += 1;
      if (signal.direction === 'same_step') pair.sameStep += 1;
      else if (signal.fileA === pair.fileA) pair.aThenB += 1;
      else pair.bThenA += 1;
      pair.lastObservedAt = Math.max(pair.lastObservedAt, signal.at);
      changes.pairs.add(key);
      return;
    }
    case 'error_retry': {
      const error = (facts.errors[signal.errorKey] ??= {
        toolName: signal.toolName,
        normalisedError: signal.normalisedError,
        sampleMessage: '',
        occurrences: 0,
        episodes: 0,
        resolvedEpisodes: 0,
        lastResolution: null,
        lastSeenAt: 0,
      });
      error.occurrences += signal.occurrences;
      error.episodes += 1;
      if (signal.resolution !== 'unresolved') error.resolvedEpisodes += 1;
      error.lastResolution = signal.resolvedHow ?? signal.resolution;
      error.sampleMessage = signal.sampleMessage;
      error.lastSeenAt = Math.max(error.lastSeenAt, signal.at);
      changes.errors.add(signal.errorKey);
      return;
    }
    case 'backtrack':
    case 'sequence':
    case 'time_anomaly':
    case 'dead_end':
    case 'e2e_observation':
      // Not in the graph yet: they live in the scratchpad until promotion.
      return;
  }
}

/** The ErrorPattern's natural key within a project. */
export function errorPatternHash(errorKey: string): string {
  return idOf('error_pattern', errorKey);
}

export interface SessionIdentity {
  tenantId: string;
  projectId: string;
  sessionId: string;
}

/** Adds the rows of one session's changed facts to a graph batch. */
export function addFactRows(
  batch: ObserverGraphBatch,
  session: SessionIdentity,
  facts: SessionFacts,
  detector: DetectorState,
  changes: FactChanges,
): void {
  const { tenantId, projectId, sessionId } = session;
  for (const path of changes.files) {
    const fact = facts.files[path];
    const file = detector.files[path];
    batch.touches.push({
      tenantId,
      projectId,
      sessionId,
      path,
      module: fact.module,
      reads: file?.reads ?? 0,
      edits: file?.edits ?? 0,
      accesses: fact.accesses,
      firstAt: fact.firstAt,
      lastAt: fact.lastAt,
    } satisfies GraphTouchRow);
  }
  for (const path of changes.newFiles) batch.newlyTouchedFiles.push({ tenantId, projectId, path });
  for (const key of changes.pairs) {
    batch.sessionPairs.push({
      tenantId,
      projectId,
      sessionId,
      ...facts.pairs[key],
    } satisfies GraphSessionPairRow);
  }
  for (const errorKey of changes.errors) {
    const { toolName, normalisedError, sampleMessage, ...counts } = facts.errors[errorKey];
    batch.errors.push({
      tenantId,
      projectId,
      sessionId,
      hash: errorPatternHash(errorKey),
      toolName,
      normalisedError,
      sampleMessage: sampleMessage.slice(0, 500),
      ...counts,
    } satisfies GraphErrorRow);
  }
}
