import { MEMORY_TYPES, type MemoryType } from '@engram/contracts';
import type { StaleMode } from './memory-filter';
import { toUniversalPhase } from './methodology-plugins';
import { requireScope, type RecallScope } from './recall-scope';
import { InvalidRecallRequestError } from './retrieval-errors';
import { validateTemporalMode, type TemporalMode } from './temporal';
import type { UniversalPhase } from './universal-phase';

/** The searchable tiers (SPEC §7), in the order a tie between tiers is broken. */
export const RECALL_TIERS = ['memories', 'episodes', 'turns'] as const;
export type RecallTier = (typeof RECALL_TIERS)[number];

/** Results per recall when the request leaves it open (proto `k = 0`). */
export const DEFAULT_RECALL_K = 10;
/** Beyond this a "recall" is a dump: refused rather than silently cut. */
export const MAX_RECALL_K = 100;
/** A query is a question or a task description, not a document. */
export const MAX_RECALL_QUERY_CHARS = 4_000;

/** A recall as a client states it (gRPC, CLI): loosely typed, every field optional. */
export interface RecallRequestInput {
  tenantId?: string | null;
  projectId?: string | null;
  query?: string | null;
  /** A universal phase, or a phase of `methodology`; absent or unknown → explore. */
  phase?: string | null;
  methodology?: string | null;
  /** 0 or absent: DEFAULT_RECALL_K. */
  k?: number | null;
  /** One tier or `all` (absent: all). */
  tier?: string | null;
  memoryTypes?: readonly string[] | null;
  relatedFiles?: readonly string[] | null;
  temporal?: TemporalMode | null;
  excludeStale?: boolean | null;
  /** Memories below this (presented) confidence are left out; absent: no floor. */
  minConfidence?: number | null;
  sessionId?: string | null;
  /**
   * Whether the returned memories are counted as accessed (absent: true). False for evaluations
   * and dashboards (`engram recall --no-track`, proto `no_track`): nothing is written.
   */
  track?: boolean | null;
}

/** A validated recall: every default applied, every field checked. */
export interface RecallQuery {
  scope: RecallScope;
  query: string;
  phase: UniversalPhase;
  k: number;
  tiers: RecallTier[];
  memoryTypes: MemoryType[];
  relatedFiles: string[];
  temporal: TemporalMode | null;
  stale: StaleMode;
  minConfidence: number | null;
  sessionId: string | null;
  /** Record the returned memories' access (see RecallRequestInput.track). */
  track: boolean;
}

/**
 * Checks a recall request and applies its defaults. Throws InvalidRecallRequestError naming the
 * field (tenantId, projectId, query, k, tier, memoryTypes[i], relatedFiles, temporal fields), so
 * every edge (gRPC INVALID_ARGUMENT, a CLI line error) can say what to fix.
 */
export function parseRecallRequest(input: RecallRequestInput): RecallQuery {
  const scope = requireScope({
    tenantId: input.tenantId ?? undefined,
    projectId: input.projectId ?? undefined,
  });
  const relatedFiles = [...(input.relatedFiles ?? [])];
  if (relatedFiles.some((file) => file.trim() === '')) {
    throw new InvalidRecallRequestError('relatedFiles', 'must not contain empty paths');
  }
  const temporal = input.temporal ? validateTemporalMode(input.temporal) : null;
  return {
    scope,
    query: recallQueryText(input.query),
    phase: toUniversalPhase(input.methodology, input.phase),
    k: recallK(input.k),
    tiers: recallTiers(input.tier),
    memoryTypes: recallMemoryTypes(input.memoryTypes ?? []),
    relatedFiles,
    temporal,
    stale: input.excludeStale ? 'exclude' : 'penalise',
    minConfidence: recallMinConfidence(input.minConfidence),
    sessionId: input.sessionId?.trim() || null,
    track: input.track ?? true,
  };
}

function recallQueryText(query: string | null | undefined): string {
  const text = query?.trim() ?? '';
  if (text === '') throw new InvalidRecallRequestError('query', 'is required');
  if (text.length > MAX_RECALL_QUERY_CHARS) {
    throw new InvalidRecallRequestError(
      'query',
      `is ${text.length} characters; at most ${MAX_RECALL_QUERY_CHARS}`,
    );
  }
  return text;
}

function recallK(k: number | null | undefined): number {
  if (k === null || k === undefined || k === 0) return DEFAULT_RECALL_K;
  if (!Number.isInteger(k) || k < 1 || k > MAX_RECALL_K) {
    throw new InvalidRecallRequestError(
      'k',
      `must be a whole number in 1..${MAX_RECALL_K}, got ${k}`,
    );
  }
  return k;
}

/** `all` (or nothing) is every tier; a single tier name is that tier. */
export function recallTiers(tier: string | null | undefined): RecallTier[] {
  const name = tier?.trim().toLowerCase() ?? '';
  if (name === '' || name === 'all') return [...RECALL_TIERS];
  const found = RECALL_TIERS.find((candidate) => candidate === name);
  if (!found) {
    throw new InvalidRecallRequestError(
      'tier',
      `must be one of ${[...RECALL_TIERS, 'all'].join(', ')}, got "${tier}"`,
    );
  }
  return [found];
}

function recallMemoryTypes(types: readonly string[]): MemoryType[] {
  return types.map((type, index) => {
    if (!(MEMORY_TYPES as readonly string[]).includes(type)) {
      throw new InvalidRecallRequestError(
        `memoryTypes[${index}]`,
        `"${type}" is not a memory type (${MEMORY_TYPES.join(', ')})`,
      );
    }
    return type as MemoryType;
  });
}

function recallMinConfidence(value: number | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  if (!(value >= 0 && value <= 1)) {
    throw new InvalidRecallRequestError('minConfidence', `must be within [0, 1], got ${value}`);
  }
  return value;
}
