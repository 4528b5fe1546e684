/**
 * The file-prediction protocol (issue #23) and its plain baselines, pure.
 *
 * Sessions are replayed in order (each session's calls in step order, sessions one after the
 * other). Two kinds of query, each asked at a point of that replay and answered from what was
 * replayed before it — never from the future:
 * - `online`: in a queried session, right after the call that touches a file for the first time
 *   in the session, "what will this session touch next?": the query is that file, the targets
 *   every other file the session reads or edits at a later step. The graph knows the earlier
 *   sessions of the project and this session up to the query.
 * - `next-session`: before a queried session starts, with at least one earlier session of its
 *   project replayed: the query is its first file, the targets every other file it touches.
 * recall@5 = targets among the top 5 / targets; MRR = 1 / rank of the first target in the top 5
 * (0 if none); answered = share of queries with at least one prediction. Means over queries.
 */
import { touchedFiles, type BenchCall, type BenchSession } from './sessions';

export const K = 5;

export type QueryKind = 'online' | 'next-session';

export interface FileQuery {
  kind: QueryKind;
  projectId: string;
  sessionId: string;
  file: string;
  targets: string[];
  /** Ask after this call of the session is replayed (-1: before its first call). */
  afterCall: number;
}

/** The queries of one session (given whether its project has an earlier replayed session). */
export function queriesOf(session: BenchSession, projectSeenBefore: boolean): FileQuery[] {
  if (!session.queried) return [];
  const queries: FileQuery[] = [];
  const base = { projectId: session.projectId, sessionId: session.sessionId };
  const all = touchedFiles(session);
  if (projectSeenBefore && all.length >= 2) {
    queries.push({
      ...base,
      kind: 'next-session',
      file: all[0],
      targets: all.slice(1),
      afterCall: -1,
    });
  }
  const seen = new Set<string>();
  session.calls.forEach((call, index) => {
    if (!call.touches) return;
    for (const file of call.filePaths) {
      if (seen.has(file)) continue;
      seen.add(file);
      const later = new Set<string>();
      for (const next of session.calls.slice(index + 1)) {
        if (next.touches) for (const f of next.filePaths) if (f !== file) later.add(f);
      }
      if (later.size > 0) {
        queries.push({ ...base, kind: 'online', file, targets: [...later], afterCall: index });
      }
    }
  });
  return queries;
}

export interface Scores {
  queries: number;
  recallAt5: number;
  mrr: number;
  answered: number;
  meanAnswers: number;
}

export function scoreQuery(predicted: readonly string[], targets: readonly string[]) {
  const top = predicted.slice(0, K);
  const wanted = new Set(targets);
  const hits = top.filter((file) => wanted.has(file)).length;
  const first = top.findIndex((file) => wanted.has(file));
  return {
    recall: targets.length === 0 ? 0 : hits / wanted.size,
    reciprocalRank: first < 0 ? 0 : 1 / (first + 1),
    answered: top.length > 0,
    answers: top.length,
  };
}

export function meanScores(results: readonly ReturnType<typeof scoreQuery>[]): Scores {
  const n = results.length;
  const mean = (f: (r: ReturnType<typeof scoreQuery>) => number) =>
    n === 0 ? Number.NaN : results.reduce((sum, r) => sum + f(r), 0) / n;
  return {
    queries: n,
    recallAt5: mean((r) => r.recall),
    mrr: mean((r) => r.reciprocalRank),
    answered: mean((r) => (r.answered ? 1 : 0)),
    meanAnswers: mean((r) => r.answers),
  };
}

/**
 * What the baselines know: the replayed calls so far, per project. Most-frequent ranks files by
 * the sessions that touched them (then accesses, then path); co-occurrence counts every pair of
 * touches of two files within `window` steps of one session (raw counts, no normalisation).
 */
export class BaselineKnowledge {
  private readonly projects = new Map<string, ProjectKnowledge>();

  constructor(private readonly window = 3) {}

  observe(session: BenchSession, call: BenchCall): void {
    if (!call.touches) return;
    const project = this.projectOf(session.projectId);
    const recent = (project.recent.get(session.sessionId) ?? []).filter(
      (touch) => call.step - touch.step <= this.window,
    );
    for (const file of new Set(call.filePaths)) {
      const sessions = project.sessions.get(file) ?? new Set<string>();
      sessions.add(session.sessionId);
      project.sessions.set(file, sessions);
      project.accesses.set(file, (project.accesses.get(file) ?? 0) + 1);
      for (const touch of recent) {
        if (touch.file === file) continue;
        increment(project.cooccurrence, file, touch.file);
        increment(project.cooccurrence, touch.file, file);
      }
    }
    for (const file of new Set(call.filePaths)) recent.push({ file, step: call.step });
    project.recent.set(session.sessionId, recent);
  }

  mostFrequent(projectId: string, file: string, k = K): string[] {
    const project = this.projects.get(projectId);
    if (!project) return [];
    return [...project.sessions.keys()]
      .filter((f) => f !== file)
      .sort(
        (a, b) =>
          project.sessions.get(b)!.size - project.sessions.get(a)!.size ||
          project.accesses.get(b)! - project.accesses.get(a)! ||
          (a < b ? -1 : 1),
      )
      .slice(0, k);
  }

  coOccurrence(projectId: string, file: string, k = K): string[] {
    const counts = this.projects.get(projectId)?.cooccurrence.get(file);
    if (!counts) return [];
    return [...counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, k)
      .map(([f]) => f);
  }

  private projectOf(projectId: string): ProjectKnowledge {
    let project = this.projects.get(projectId);
    if (!project) {
      project = {
        sessions: new Map(),
        accesses: new Map(),
        cooccurrence: new Map(),
        recent: new Map(),
      };
      this.projects.set(projectId, project);
    }
    return project;
  }
}

interface ProjectKnowledge {
  sessions: Map<string, Set<string>>;
  accesses: Map<string, number>;
  cooccurrence: Map<string, Map<string, number>>;
  recent: Map<string, { file: string; step: number }[]>;
}

function increment(table: Map<string, Map<string, number>>, a: string, b: string): void {
  const row = table.get(a) ?? new Map<string, number>();
  row.set(b, (row.get(b) ?? 0) + 1);
  table.set(a, row);
}
