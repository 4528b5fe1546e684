import type { EpochMillis } from '@engram/contracts';

/**
 * The friction report (SPEC §9, seed 001 phase 4): what keeps going wrong for the agents of a
 * project, a tenant or the whole organisation over a window, and what to change. The detectors
 * here are pure: their inputs are rows an adapter aggregated (SQL in embedded mode), their
 * outputs findings; proposals and rendering are pure too.
 */

export const FRICTION_KINDS = [
  'recurring-failure',
  'repeated-correction',
  'tool-misuse',
  'stale-memory',
  'configuration-drift',
  'missing-skill',
] as const;
export type FrictionKind = (typeof FRICTION_KINDS)[number];

/** [from, to) in epoch millis. */
export interface FrictionWindow {
  from: EpochMillis;
  to: EpochMillis;
}

/** One project (of one tenant when given), one tenant, or everything in the data. */
export type FrictionScope =
  | { kind: 'project'; projectId: string; tenantId: string | null }
  | { kind: 'tenant'; tenantId: string }
  | { kind: 'all' };

/** What a proposal would change. File targets carry a unified diff. */
export type FrictionChange =
  | {
      kind: 'file';
      /**
       * `AGENTS.md` (every agent reads it), `CLAUDE.md` (only Claude Code sessions had it), or
       * the `SKILL.md` of a new skill (a missing-skill finding: the patch creates the file).
       */
      file: string;
      /** The lines the proposal adds, without diff markers. */
      lines: string[];
      /**
       * A unified diff that inserts `lines` at the top of the file, or creates it (`patch -p1`,
       * `git apply --unidiff-zero`).
       */
      patch: string;
    }
  | {
      kind: 'memory';
      memoryId: string;
      action: 'retire';
      reason: string;
    };

export interface FrictionEvidence {
  /** Sessions the friction was seen in (a bounded sample; `sessions` counts them all). */
  sessionIds: string[];
  /** Events that show it (`engram` resolves them: they are eventIds of the agent topics). */
  eventIds: string[];
  memoryIds: string[];
}

/** Estimated cost of a friction over the window. */
export interface FrictionCost {
  /** Times it happened. */
  occurrences: number;
  /** Tool time measured on the events (durationMs), in minutes. */
  measuredMinutes: number;
  /** Tokens the events report (tokensUsed), 0 when none do. */
  tokens: number;
  /** measured minutes + occurrences × minutesPerOccurrence + tokens / tokensPerMinute. */
  estimatedMinutes: number;
}

/** A friction a detector found, before it is ranked and given an id. */
export interface FrictionFinding {
  kind: FrictionKind;
  /** Natural key: equal input gives an equal key (it orders equal-severity proposals). */
  key: string;
  /**
   * What the friction is about, across detectors (`tenant, tool, command` of a failing command):
   * findings with the same subject are one cluster, one proposal. Null: a cluster of its own.
   */
  subject: string | null;
  /** The other detectors whose findings were merged into this one. */
  alsoSeenAs: FrictionKind[];
  tenantId: string;
  projectIds: string[];
  title: string;
  /** One or two sentences: what happens, how often. */
  summary: string;
  /** Distinct sessions affected (all of them, not the evidence sample). */
  sessions: number;
  firstAt: EpochMillis;
  lastAt: EpochMillis;
  cost: FrictionCost;
  evidence: FrictionEvidence;
  /** Agents of the evidence sessions (decides AGENTS.md or CLAUDE.md). */
  agentIds: string[];
  /** What to write into the target (file findings), or the memory to retire. */
  proposedLines: string[];
  memoryId: string | null;
  /** A missing-skill finding: the skill to create (its directory name and `SKILL.md` lines). */
  skill?: { name: string; lines: string[] };
  /** 0..1 */
  confidence: number;
}

export type SeverityLevel = 'high' | 'medium' | 'low';

export interface FrictionSeverity {
  /** sessions affected × estimated minutes. */
  score: number;
  level: SeverityLevel;
  sessions: number;
  estimatedMinutes: number;
  tokens: number;
}

/** A ranked finding with its id (`f-YYYYMMDD-NNN`), target and exact change. */
export interface FrictionProposal extends FrictionFinding {
  id: string;
  target: 'AGENTS.md' | 'CLAUDE.md' | 'memory' | 'skill';
  change: FrictionChange;
  severity: FrictionSeverity;
}

/** Friction events per UTC day and kind (the "friction over time" chart). */
export interface FrictionDayCount {
  /** `YYYY-MM-DD`. */
  day: string;
  kind: FrictionKind;
  count: number;
}

export interface FrictionTotals {
  sessions: number;
  events: number;
}

export interface FrictionReport {
  window: FrictionWindow;
  scope: FrictionScope;
  totals: FrictionTotals;
  proposals: FrictionProposal[];
  timeline: FrictionDayCount[];
  /** Estimated minutes lost per project (from the proposals), highest first. */
  costByProject: { projectId: string; estimatedMinutes: number; proposals: number }[];
}
