import type { MemoryType } from '@engram/contracts';
import {
  anySameFile,
  IMPACT_NEIGHBOURS_PER_FILE,
  impactDepth,
  impactScore,
  isTestFile,
  propagateImpact,
  rankByPriors,
  type CoAccessReader,
  type ImpactEdge,
  type ImpactedFile,
  type RankedMemory,
  type RankingConfig,
  type RecallScope,
  memoryFilters,
  relatedFileFilter,
} from '@engram/core';
import { memoryFromSource, type MemoryDocument } from '@engram/core';
import type { RecallStore } from './recall-store';

/** What bites when a file changes: the knowledge about it and the files it drags along. */
const IMPACT_MEMORY_TYPES: readonly MemoryType[] = [
  'gotcha',
  'decision',
  'requirement',
  'error_pattern',
  'dead_end',
];
/** Memories returned per kind (the most confident, recent, used first). */
const IMPACT_MEMORIES = 10;
const IMPACT_CANDIDATES = 100;

export interface ImpactAnswer {
  filePath: string;
  direct: ImpactedFile[];
  transitive: ImpactedFile[];
  memories: RankedMemory[];
  e2eObservations: RankedMemory[];
  testFiles: string[];
  impactScore: number;
}

/**
 * AnalyzeImpact: the co-access graph (the same reader as GetFileNeighbors), walked hop by hop up
 * to the depth asked, and the non-stale memories about the file and the files it reaches.
 */
export class ImpactService {
  constructor(
    private readonly graph: CoAccessReader,
    private readonly store: RecallStore,
    private readonly config: RankingConfig,
    private readonly clock: () => number = Date.now,
  ) {}

  /** `path` is already normalised (relative to the project root). */
  async analyze(scope: RecallScope, path: string, maxDepth?: number): Promise<ImpactAnswer> {
    const depth = impactDepth(maxDepth);
    const edges = await this.edgesAround(scope, path, depth);
    const files = propagateImpact(path, edges, depth);
    const affected = [path, ...files.map((file) => file.path)];
    const [memories, e2eObservations] = await Promise.all([
      this.memoriesAbout(scope, affected, IMPACT_MEMORY_TYPES),
      this.memoriesAbout(scope, affected, ['e2e_observation']),
    ]);
    return {
      filePath: path,
      direct: files.filter((file) => file.depth === 1),
      transitive: files.filter((file) => file.depth > 1),
      memories,
      e2eObservations,
      testFiles: affected.filter(isTestFile),
      impactScore: impactScore(files),
    };
  }

  /** The co-access edges of every file reached so far, one graph round per hop. */
  private async edgesAround(scope: RecallScope, path: string, depth: number) {
    const edges: ImpactEdge[] = [];
    let frontier = [path];
    for (let hop = 1; hop <= depth && frontier.length > 0; hop += 1) {
      const layers = await Promise.all(
        frontier.map(async (from) => {
          const neighbours = await this.graph.topCoAccessNeighbours({
            ...scope,
            path: from,
            k: IMPACT_NEIGHBOURS_PER_FILE,
          });
          return neighbours.map((n) => ({ from, to: n.file, weight: n.weight }));
        }),
      );
      edges.push(...layers.flat());
      frontier = propagateImpact(path, edges, hop)
        .filter((file) => file.depth === hop)
        .map((file) => file.path);
    }
    return edges;
  }

  private async memoriesAbout(
    scope: RecallScope,
    files: readonly string[],
    types: readonly MemoryType[],
  ): Promise<RankedMemory[]> {
    const listed = await this.store.list<MemoryDocument>('memories', {
      scope,
      filter: [
        ...memoryFilters({ types, stale: 'exclude' }, undefined),
        relatedFileFilter(...files),
      ],
      size: IMPACT_CANDIDATES,
    });
    const about = listed
      .map((doc) => memoryFromSource(doc.source))
      .filter((memory) => anySameFile(memory.relatedFiles, files));
    const ranked = rankByPriors(
      { memories: about, phase: 'implement', now: this.clock() },
      this.config,
    );
    return ranked.slice(0, IMPACT_MEMORIES);
  }
}
