import type { Memory, MemoryType } from '@engram/contracts';
import { anySameFile } from './file-paths';
import type { MemoryFilter } from './memory-filter';
import type { InjectionConfig, RankingConfig } from './ranking-config';
import { inScope, requireScope, type RecallScope } from './recall-scope';
import { rankByPriors, type RankedMemory } from './rank-memories';
import { InvalidRecallRequestError } from './retrieval-errors';
import { injectionBlock, supersededIdsIn } from './injection-guard';
import type { UniversalPhase } from './universal-phase';

/**
 * Proactive injection (seed 002 §7): when an agent reads or edits a file, append what is known to
 * bite there — without being asked. Because nobody asked, the bar is higher than for a search:
 * only the four warning types, only about that file, confident (≥ 0.65), proven (user-verified or
 * returned at least twice before) and never stale (a stale warning about a file that no longer
 * exists is noise at best, wrong at worst). At most four.
 */

export type InjectionRejection =
  | 'out_of_scope'
  | 'type'
  | 'not_about_file'
  | 'stale'
  | 'superseded'
  | 'low_confidence'
  | 'unproven'
  | 'over_limit';

export interface InjectionRequest {
  scope: RecallScope;
  filePath: string;
  phase: UniversalPhase;
  now: number;
  /** Candidates from the store (the adapter queries with `injectionFilter`). */
  candidates: readonly Memory[];
  /** Defaults to, and is capped at, the config's maxResults (4). */
  limit?: number;
}

export interface InjectionSelection {
  memories: RankedMemory[];
  /** Every candidate left out, and why (for debugging "why was this not injected"). */
  rejected: { memoryId: string; reason: InjectionRejection }[];
  /** Ready-to-append block; '' when nothing applies. */
  rendered: string;
}

/** Whether a tool call triggers injection (seed 002: Read and Edit). */
export function injectsForTool(toolName: string, config: RankingConfig): boolean {
  return config.injection.tools.includes(toolName);
}

/**
 * The store query for injection candidates. Stale memories are excluded at the source; the
 * "proven" rule is left to `selectInjections`, so the adapter should fetch more than the limit.
 */
export function injectionFilter(
  scope: RecallScope,
  filePath: string,
  config: RankingConfig,
): MemoryFilter {
  return {
    ...requireScope(scope),
    types: config.injection.types,
    relatedFiles: [requireFilePath(filePath)],
    minConfidence: config.injection.minConfidence,
    stale: 'exclude',
  };
}

export function selectInjections(
  request: InjectionRequest,
  config: RankingConfig,
): InjectionSelection {
  const scope = requireScope(request.scope);
  const filePath = requireFilePath(request.filePath);
  const rejected: InjectionSelection['rejected'] = [];
  const superseded = supersededIdsIn(request.candidates);
  const eligible = request.candidates.filter((memory) => {
    const reason = injectionRejection(memory, scope, filePath, config.injection, superseded);
    if (reason !== null) rejected.push({ memoryId: memory.memoryId, reason });
    return reason === null;
  });
  const ranked = rankByPriors(
    { memories: eligible, phase: request.phase, now: request.now },
    config,
  );
  const limit = Math.min(
    config.injection.maxResults,
    Math.max(0, request.limit ?? config.injection.maxResults),
  );
  for (const extra of ranked.slice(limit)) {
    rejected.push({ memoryId: extra.memory.memoryId, reason: 'over_limit' });
  }
  const memories = ranked.slice(0, limit);
  return { memories, rejected, rendered: renderInjection(memories) };
}

/**
 * Why a candidate may not be injected, or null. Checked in this order. `supersededIds`: the ids
 * the other candidates say they supersede (injection-guard.ts).
 */
export function injectionRejection(
  memory: Memory,
  scope: RecallScope,
  filePath: string,
  rules: InjectionConfig,
  supersededIds?: ReadonlySet<string>,
): InjectionRejection | null {
  if (!inScope(memory, scope)) return 'out_of_scope';
  if (!rules.types.includes(memory.memoryType)) return 'type';
  if (!anySameFile(memory.relatedFiles, [filePath])) return 'not_about_file';
  const blocked = injectionBlock(memory, supersededIds);
  if (blocked !== null) return blocked;
  if (!(memory.confidence >= rules.minConfidence)) return 'low_confidence';
  if (!memory.userVerified && !(memory.accessCount >= rules.minAccessCount)) return 'unproven';
  return null;
}

const SECTIONS: readonly { type: MemoryType; label: string }[] = [
  { type: 'gotcha', label: '⚠️ Gotcha' },
  { type: 'error_pattern', label: '🔴 Error pattern' },
  { type: 'dead_end', label: '🚫 Dead end' },
  { type: 'e2e_observation', label: '📱 E2E' },
];

/**
 * Seed 002's block: grouped by type (gotchas first), each line citing the first 8 characters of
 * the memory id so feedback can name it.
 */
export function renderInjection(
  memories: readonly { memory: Pick<Memory, 'memoryId' | 'memoryType'>; content: string }[],
): string {
  if (memories.length === 0) return '';
  const lines: string[] = [];
  for (const { type, label } of SECTIONS) {
    for (const ranked of memories.filter((m) => m.memory.memoryType === type)) {
      lines.push(`${label} [${ranked.memory.memoryId.slice(0, 8)}]: ${ranked.content}`);
    }
  }
  return `---\n**Memory context for this file:**\n${lines.join('\n')}`;
}

function requireFilePath(filePath: string): string {
  if (filePath.trim() === '') throw new InvalidRecallRequestError('filePath', 'is required');
  return filePath.trim();
}
