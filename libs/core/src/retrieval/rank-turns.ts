import type { PromptSubmitted } from '@engram/contracts';
import { NEUTRAL_USE, type ScoringSubject } from './hybrid-score';
import { inRange, inSessions, type TemporalConstraint } from './temporal';
import type { ModelVector } from './model-vector';
import type { Provenance } from './provenance';
import { rankRecords } from './rank-documents';
import type { RankingConfig } from './ranking-config';
import { inScope, requireScope, type RecallScope } from './recall-scope';
import type { RankedHit } from './rrf';
import type { ScoreComponents } from './score-components';
import type { UniversalPhase } from './universal-phase';

/** A user prompt as the turns tier stores it (a turn is identified by its eventId). */
export type Turn = PromptSubmitted;

export interface RankedTurn {
  turn: Turn;
  score: ScoreComponents;
  provenance: Provenance;
}

export interface RankTurnsInput {
  scope: RecallScope;
  phase: UniversalPhase;
  now: number;
  bm25: readonly RankedHit[];
  knn: readonly RankedHit[] | null;
  query: ModelVector | null;
  turns: readonly Turn[];
  /** Prompt records carry no vector; the index does, and the adapter passes it here. */
  vectors: ReadonlyMap<string, ModelVector>;
  temporal?: TemporalConstraint;
  limit?: number;
}

/**
 * Turns are raw history: no evidence of use either way (NEUTRAL_USE), their recency clock is when they
 * were typed, and they have no memory type (phase weight 1.0) — the same treatment as episodes.
 */
export function turnSubject(turn: Turn): ScoringSubject {
  return {
    id: turn.eventId,
    memoryType: null,
    lastAccessedAt: turn.timestamp,
    accessCount: 0,
    stale: false,
    use: NEUTRAL_USE,
  };
}

/**
 * A turn is its own source: its session, promptId and eventId. Its episode is not known here (a
 * prompt does not know its episode when published); `episodeIds` lists the ones the caller found.
 */
export function turnProvenance(turn: Turn, episodeIds: readonly string[] = []): Provenance {
  return {
    tenantId: turn.tenantId,
    projectId: turn.projectId,
    sessionIds: [turn.sessionId],
    episodeIds: [...episodeIds],
    promptIds: [turn.promptId],
    eventIds: [turn.eventId],
    memoryId: null,
    commitSha: null,
  };
}

/** A turn matches a range it was typed in, or a session set holding its session. */
export function turnInTemporal(turn: Turn, constraint: TemporalConstraint): boolean {
  return constraint.kind === 'range'
    ? inRange(constraint, turn.timestamp)
    : inSessions(constraint, [turn.sessionId]);
}

/**
 * Recall on the turns tier (full-history recall, the "reflect" use): the same fusion and priors
 * as the other tiers, scoped, only user prompts, optionally limited in time.
 */
export function rankTurns(input: RankTurnsInput, config: RankingConfig): RankedTurn[] {
  const scope = requireScope(input.scope);
  const { turns, scope: _scope, temporal, ...tier } = input;
  const inTime = (turn: Turn) => !temporal || turnInTemporal(turn, temporal);
  return rankRecords(
    tier,
    new Map(turns.map((turn) => [turn.eventId, turn])),
    (turn) => inScope(turn, scope) && turn.source === 'user' && inTime(turn),
    turnSubject,
    config,
  ).map(({ record: turn, score }) => ({ turn, score, provenance: turnProvenance(turn) }));
}
