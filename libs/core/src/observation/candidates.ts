import type { MemoryScope, MemorySource, MemoryType } from '@engram/contracts';
import type { ThresholdSignal } from './observer-settings';
import type {
  BacktrackCause,
  DeadEndTrigger,
  E2eObservationSignal,
  ObserverSignal,
} from './signals';

/** What an e2e_observation memory says: the newest of its signals, as observed. */
export type E2eObservationFacts = Pick<
  E2eObservationSignal,
  'observationType' | 'mcpTool' | 'action' | 'target' | 'page' | 'outcome' | 'before'
>;

/** The rules of SPEC §5 / seed 002 §5 (plus QA failures and the agent's remember_this). */
export type InferenceRuleName =
  | 'causal_dependency'
  | 'module_insight'
  | 'error_pattern'
  | 'gotcha'
  | 'prefetch_pattern'
  | 'dead_end'
  | 'context_cost'
  | 'task_calibration'
  | 'workflow_recipe'
  | 'qa_failure'
  /** Browser automation MCP results of a QA agent (seed 002 §9). */
  | 'e2e_observation'
  | 'remember_request'
  /** The consolidation pass after a large spec (seed 002 §8). */
  | 'consolidation';

/** Where a candidate came from: the sessions and tool-call (or lifecycle) events. */
export interface CandidateEvidence {
  sessionIds: string[];
  eventIds: string[];
  /** The newest evidence: its session and prompt name the memory's session and episode. */
  latest: { sessionId: string; promptId: number | null; at: number } | null;
}

/** What a rule found, by memory type: the facts templates and type-specific fields are built from. */
export type CandidateFacts =
  | {
      kind: 'causal_dependency';
      fileA: string;
      fileB: string;
      sessionCount: number;
      weight: number;
      direction: 'a_to_b' | 'b_to_a' | 'none';
      avgTimeDeltaMs: number;
    }
  | {
      kind: 'module_insight';
      filePath: string;
      module: string;
      readCount: number;
      dwellMs: number;
      sessionCount: number;
    }
  | {
      kind: 'error_pattern';
      toolName: string;
      normalisedError: string;
      sampleMessage: string;
      occurrences: number;
      resolutions: string[];
    }
  | {
      kind: 'gotcha';
      filePath: string;
      occurrences: number;
      withinSteps: number;
      causes: Partial<Record<BacktrackCause, number>>;
      pairedFiles: string[];
    }
  | {
      kind: 'prefetch_pattern';
      module: string;
      alwaysReadFiles: string[];
      frequentlyReadFiles: string[];
      sessionCount: number;
    }
  | {
      kind: 'dead_end';
      trigger: DeadEndTrigger;
      revertedFiles: string[];
      approachFiles: string[];
      stepsSpent: number;
      revertCommand: string | null;
      errorsSeen: string[];
      alternativeFiles: string[];
    }
  | {
      kind: 'context_cost';
      module: string;
      averageTokens: number;
      p90Tokens: number;
      sampleCount: number;
    }
  | {
      kind: 'task_calibration';
      module: string;
      methodology: string;
      averageActualSteps: number;
      averagePlannedSteps: number;
      ratio: number;
      sampleCount: number;
    }
  | {
      kind: 'workflow_recipe';
      module: string;
      toolSequence: string[];
      steps: Array<{ tool: string; file: string | null }>;
      sessionCount: number;
      lastValidatedAt: number;
    }
  | {
      kind: 'qa_failure';
      severity: string;
      description: string;
      file: string | null;
      module: string | null;
      whatWasTried: string | null;
      recommendation: string | null;
    }
  | ({ kind: 'e2e_observation'; occurrences: number } & E2eObservationFacts)
  | { kind: 'remember_request'; text: string }
  | { kind: 'consolidated_insight'; insightKind: string; text: string };

/** A memory a rule proposes, before the promotion pipeline decides on it. */
export interface MemoryCandidate {
  /** `memoryType:naturalKey`, unique within one promotion run. */
  key: string;
  memoryType: MemoryType;
  /** The natural key the memory id is derived from (with tenant, project and type). */
  naturalKey: string;
  rule: InferenceRuleName;
  /** Which frequency threshold applies. */
  signalType: ThresholdSignal;
  source: MemorySource;
  scope: MemoryScope;
  /** Sessions or occurrences, as the threshold of `signalType` counts them. */
  frequency: number;
  lastObservedAt: number;
  relatedFiles: string[];
  relatedModules: string[];
  evidence: CandidateEvidence;
  facts: CandidateFacts;
}

/** Evidence from signals: distinct sessions and events, sorted, and the newest signal. */
export function signalEvidence(signals: readonly ObserverSignal[]): CandidateEvidence {
  let latest: ObserverSignal | null = null;
  for (const signal of signals) if (latest === null || signal.at > latest.at) latest = signal;
  return {
    sessionIds: sortedUnique(signals.map((s) => s.sessionId)),
    eventIds: sortedUnique(signals.flatMap((s) => s.eventIds)),
    latest: latest && { sessionId: latest.sessionId, promptId: latest.promptId, at: latest.at },
  };
}

export function sortedUnique(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/** Groups items by a key, keeping first-seen order of keys. */
export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** Latest `at` of the signals (0 for none). */
export function latestAt(signals: readonly ObserverSignal[]): number {
  return signals.reduce((max, signal) => Math.max(max, signal.at), 0);
}
