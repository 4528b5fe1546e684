import type {
  CoAccessReader,
  GraphCoAccessNeighbour,
  GraphNeighbourEvidence,
  GraphNeighbourEvidenceQuery,
} from '../ports/observer-graph';

/**
 * `engram neighbors` (SPEC §12, issue #23): what a session that touches a file will touch, ranked
 * by evidence rather than by the edge weight alone. The score of a file b for the query file a is
 * the smoothed share of a's sessions that touched b too:
 *
 *     score(b) = (sessions with a and b + m · p(b)) / (sessions with a + m)
 *
 * with p(b) = the share of the project's sessions that touched b (its popularity) and m the prior's
 * weight in sessions. It is the estimate of P(b | a) that starts from the project-wide P(b) and
 * moves towards what a's own sessions did as they accumulate. So a file a has never been seen with
 * ranks by popularity (the project's most-touched files fill the list: a query on a project with
 * k + 1 files always gets k answers), evidence of one session outweighs popularity (m = 1), and a
 * pair seen in many sessions outweighs one seen once. Ties go to the pair's raw co-access count,
 * then popularity, then path. Sessions include `engram bootstrap`'s commits, so git co-commits
 * count where agents have not been seen yet.
 *
 * Only a's most recent `sessionWindow` sessions are counted: a bounded read for a hot file, and
 * what the project does now rather than years ago.
 */
export interface FilePredictionSettings {
  /** m: the weight of the popularity prior, in sessions. Chosen: 1 (one session's evidence). */
  priorSessions: number;
  /** Chosen: 200 recent sessions of the query file. */
  sessionWindow: number;
}

export const DEFAULT_FILE_PREDICTION: Readonly<FilePredictionSettings> = Object.freeze({
  priorSessions: 1,
  sessionWindow: 200,
});

/** Where a neighbour's evidence comes from. */
export type FileNeighbourSource = 'co_access' | 'co_commit' | 'same_session' | 'frequent';

/** A ranked neighbour: the SPEC §12 fields (zero where no CO_ACCESSED edge exists), score, source. */
export interface RankedFileNeighbour extends GraphCoAccessNeighbour {
  /** The smoothed P(neighbour | query file), in [0, 1]. */
  score: number;
  /**
   * co_access: agents used the two within the co-access window; co_commit: only git co-commits
   * link them; same_session: touched in the same sessions, never within the window; frequent:
   * never with the file, one of the project's most-touched files.
   */
  source: FileNeighbourSource;
  /** Sessions of the project that touched the neighbour. */
  fileSessions: number;
}

/** The evidence query a store answers for a ranking of `k` (the fallback needs k popular files). */
export function neighbourEvidenceQuery(
  query: { tenantId: string; projectId: string; path: string; k: number },
  settings: FilePredictionSettings = DEFAULT_FILE_PREDICTION,
): GraphNeighbourEvidenceQuery {
  return {
    tenantId: query.tenantId,
    projectId: query.projectId,
    path: query.path,
    popular: Math.max(0, Math.floor(query.k)),
    sessionWindow: settings.sessionWindow,
  };
}

export function rankFileNeighbours(
  path: string,
  evidence: GraphNeighbourEvidence,
  k: number,
  settings: FilePredictionSettings = DEFAULT_FILE_PREDICTION,
): RankedFileNeighbour[] {
  const m = settings.priorSessions;
  const total = Math.max(1, evidence.projectSessions);
  const edges = new Map(evidence.edges.map((edge) => [edge.file, edge]));
  const files = new Map<string, { sessions: number; withQuery: number }>();
  for (const file of evidence.files) {
    if (file.file === path) continue;
    const seen = files.get(file.file);
    files.set(file.file, {
      sessions: Math.max(seen?.sessions ?? 0, file.sessions),
      withQuery: Math.max(seen?.withQuery ?? 0, file.withQuery),
    });
  }
  for (const edge of evidence.edges) {
    if (!files.has(edge.file)) files.set(edge.file, { sessions: 0, withQuery: 0 });
  }
  const ranked = [...files].map(([file, counts]): RankedFileNeighbour => {
    const edge = edges.get(file);
    // A co-access edge means a session with both, even if the touches were not counted.
    const withQuery = Math.max(
      counts.withQuery,
      edge === undefined ? 0 : Math.min(1, edge.sessionCount),
    );
    const sessions = Math.max(counts.sessions, withQuery);
    const popularity = Math.min(1, sessions / total);
    const score = (withQuery + m * popularity) / (Math.max(evidence.querySessions, withQuery) + m);
    const source: FileNeighbourSource =
      edge !== undefined
        ? edge.observed
          ? 'co_access'
          : 'co_commit'
        : withQuery > 0
          ? 'same_session'
          : 'frequent';
    return {
      file,
      weight: edge?.weight ?? 0,
      rawCount: edge?.rawCount ?? 0,
      sessionCount: edge?.sessionCount ?? 0,
      avgTimeDeltaMs: edge?.avgTimeDeltaMs ?? 0,
      direction: edge?.direction ?? 'both',
      lastObservedAt: edge?.lastObservedAt ?? 0,
      score,
      source,
      fileSessions: sessions,
    };
  });
  ranked.sort(
    (x, y) =>
      y.score - x.score ||
      y.rawCount - x.rawCount ||
      y.fileSessions - x.fileSessions ||
      (x.file < y.file ? -1 : 1),
  );
  return ranked.slice(0, Math.max(0, Math.floor(k)));
}

/**
 * A file's predicted neighbours from a graph store: the one definition behind `engram neighbors`
 * and the gRPC GetFileNeighbors, so both answer alike in either mode.
 */
export async function predictFileNeighbours(
  reader: Pick<CoAccessReader, 'neighbourEvidence'>,
  query: { tenantId: string; projectId: string; path: string; k: number },
  settings: FilePredictionSettings = DEFAULT_FILE_PREDICTION,
): Promise<RankedFileNeighbour[]> {
  const evidence = await reader.neighbourEvidence(neighbourEvidenceQuery(query, settings));
  return rankFileNeighbours(query.path, evidence, query.k, settings);
}
