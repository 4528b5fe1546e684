import type { Memory } from '@engram/contracts';
import { normaliseFilePath, sameFile } from './file-paths';
import type { MemoryFilter } from './memory-filter';
import { compareText } from './ordering';
import type { RankingConfig } from './ranking-config';
import { rankByPriors, type RankedMemory } from './rank-memories';
import { requireScope, type RecallScope } from './recall-scope';
import type { UniversalPhase } from './universal-phase';

/**
 * Causal-chain retrieval (seed 002 §7): files that are usually touched together with the ones in
 * question carry knowledge that matters now too (change the handler → the schema file bites).
 * The graph store returns co-access edges; this picks the neighbours, describes the follow-up
 * memory query, and merges its results behind the primary ones.
 */

/** An undirected co-access edge from the graph (weight: sessions with both / sessions with either). */
export interface CoAccessEdge {
  fileA: string;
  fileB: string;
  weight: number;
}

export interface CausalNeighbour {
  path: string;
  weight: number;
  /** The seed file the strongest edge came from. */
  via: string;
}

/**
 * Neighbours of any seed file over edges strictly heavier than `minEdgeWeight` (0.6), excluding
 * the seed files themselves; a neighbour reached from several seeds keeps its heaviest edge.
 * Heaviest first (ties by path), at most `maxFiles` (5). The seed's SQL looked only at the first
 * file; all of them are used here so the order of relatedFiles does not matter.
 */
export function selectCausalFiles(
  seedFiles: readonly string[],
  edges: readonly CoAccessEdge[],
  config: RankingConfig,
): CausalNeighbour[] {
  const seeds = seedFiles.map(normaliseFilePath).filter((file) => file !== '');
  const isSeed = (file: string): boolean => seeds.some((seed) => sameFile(seed, file));
  const best = new Map<string, CausalNeighbour>();
  for (const edge of edges) {
    if (!(edge.weight > config.causal.minEdgeWeight)) continue;
    for (const [from, to] of [
      [edge.fileA, edge.fileB],
      [edge.fileB, edge.fileA],
    ] as const) {
      const path = normaliseFilePath(to);
      if (!isSeed(from) || isSeed(path) || path === '') continue;
      const via = seeds.find((seed) => sameFile(seed, from)) ?? normaliseFilePath(from);
      const current = best.get(path);
      if (
        !current ||
        edge.weight > current.weight ||
        (edge.weight === current.weight && compareText(via, current.via) < 0)
      ) {
        best.set(path, { path, weight: edge.weight, via });
      }
    }
  }
  return [...best.values()]
    .sort((a, b) => b.weight - a.weight || compareText(a.path, b.path))
    .slice(0, config.causal.maxFiles);
}

/** The follow-up store query: the causal types about the neighbour files, stale ones penalised. */
export function causalExpansionFilter(
  scope: RecallScope,
  neighbours: readonly CausalNeighbour[],
  config: RankingConfig,
): MemoryFilter {
  return {
    ...requireScope(scope),
    types: config.causal.types,
    relatedFiles: neighbours.map((neighbour) => neighbour.path),
    stale: 'penalise',
  };
}

/**
 * Ranks the expansion memories (no query: by priors), drops those already in `primary`, flags
 * the rest as causal and appends at most `maxMemories` (5) of them after the primary results:
 * they were found by association, not by the query, so they never outrank a direct match.
 */
export function mergeCausalExpansion(
  primary: readonly RankedMemory[],
  expansion: readonly Memory[],
  phase: UniversalPhase,
  now: number,
  config: RankingConfig,
): RankedMemory[] {
  const seen = new Set(primary.map((ranked) => ranked.memory.memoryId));
  const fresh = uniqueById(expansion).filter((memory) => !seen.has(memory.memoryId));
  const ranked = rankByPriors({ memories: fresh, phase, now, causalExpansion: true }, config);
  return [...primary, ...ranked.slice(0, config.causal.maxMemories)];
}

function uniqueById(memories: readonly Memory[]): Memory[] {
  const byId = new Map<string, Memory>();
  for (const memory of memories) if (!byId.has(memory.memoryId)) byId.set(memory.memoryId, memory);
  return [...byId.values()];
}
