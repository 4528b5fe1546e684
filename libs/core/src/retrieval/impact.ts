import { compareText } from './ordering';
import { InvalidRecallRequestError } from './retrieval-errors';

/**
 * AnalyzeImpact (SPEC §7): what else a change to a file is likely to touch. The observer's graph
 * knows which files sessions touch together (co-access, weight = sessions with both / sessions
 * with either); impact spreads along those edges, multiplied hop by hop, so a file two strong
 * edges away outranks one behind a weak edge. The adapter fetches the edges layer by layer; the
 * decisions — depth, propagated weight, cut-off, test files, the score — are here.
 */

export interface ImpactEdge {
  from: string;
  to: string;
  weight: number;
}

export interface ImpactedFile {
  path: string;
  /** Hops from the changed file (1 = direct). */
  depth: number;
  /** Product of the edge weights along the strongest shortest path. */
  weight: number;
  edgeTypes: string[];
}

export const IMPACT_DEFAULT_DEPTH = 3;
export const IMPACT_MAX_DEPTH = 5;
/** Below this propagated weight a file is not "affected": it is noise of the co-access graph. */
export const IMPACT_MIN_WEIGHT = 0.1;
/** Neighbours read per file and hop (the graph's top co-access neighbours). */
export const IMPACT_NEIGHBOURS_PER_FILE = 10;

/** 0 → the default depth (3); more than IMPACT_MAX_DEPTH is refused. */
export function impactDepth(requested: number | undefined): number {
  if (requested === undefined || requested === 0) return IMPACT_DEFAULT_DEPTH;
  if (!Number.isInteger(requested) || requested < 0 || requested > IMPACT_MAX_DEPTH) {
    throw new InvalidRecallRequestError(
      'maxDepth',
      `must be a whole number in 0..${IMPACT_MAX_DEPTH}, got ${requested}`,
    );
  }
  return requested;
}

/**
 * Files reached from `start` within `maxDepth` hops: each at the depth it is first reached, with
 * the heaviest propagated weight over paths of that length; those below `minWeight` are left
 * out (and not expanded). Heaviest first, ties by path.
 */
export function propagateImpact(
  start: string,
  edges: readonly ImpactEdge[],
  maxDepth: number,
  minWeight = IMPACT_MIN_WEIGHT,
): ImpactedFile[] {
  const out = new Map<string, ImpactedFile>();
  const adjacency = new Map<string, ImpactEdge[]>();
  for (const edge of edges) adjacency.set(edge.from, [...(adjacency.get(edge.from) ?? []), edge]);
  let frontier = new Map<string, number>([[start, 1]]);
  for (let depth = 1; depth <= maxDepth && frontier.size > 0; depth += 1) {
    const next = new Map<string, number>();
    for (const [file, weight] of frontier) {
      for (const edge of adjacency.get(file) ?? []) {
        const reached = weight * edge.weight;
        if (edge.to === start || out.has(edge.to) || reached < minWeight) continue;
        next.set(edge.to, Math.max(next.get(edge.to) ?? 0, reached));
      }
    }
    for (const [path, weight] of next) {
      out.set(path, { path, depth, weight, edgeTypes: ['co_accessed'] });
    }
    frontier = next;
  }
  return [...out.values()].sort((a, b) => b.weight - a.weight || compareText(a.path, b.path));
}

/** The chance at least one affected file is touched, if each were independent: 1 − Π(1 − w). */
export function impactScore(files: readonly ImpactedFile[]): number {
  return 1 - files.reduce((untouched, file) => untouched * (1 - file.weight), 1);
}

const TEST_FILE = /(^|\/)(__tests__|tests?|spec)\/|\.(test|spec|e2e)\.[^/]+$|_test\.(go|py)$/;

/** A test by the usual conventions (`*.test.ts`, `*.spec.js`, `__tests__/`, `tests/`, `x_test.go`). */
export function isTestFile(path: string): boolean {
  return TEST_FILE.test(path);
}
