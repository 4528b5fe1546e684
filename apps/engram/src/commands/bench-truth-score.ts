import { eng as STOP_WORDS } from 'stopword';
import stem from 'wink-porter2-stemmer';
import { bm25Idf, bm25TermScore } from '@engram/core';
import {
  FACT_KINDS,
  outdatedKeys,
  type FactKind,
  type TruthFile,
  type TruthNote,
  type TruthProject,
  type TruthQuery,
} from './bench-truth-world';

// `engram bench truth`, the scoring: pure. What a method answered (result keys per question,
// injected keys per file, the memories BuildContext put in) against the world's truth; and the
// baseline a user has without any of Engram's lifecycle: plain BM25 over every note ever taught,
// injection by file path alone.

export const TRUTH_TARGETS = { top1: 0.95, staleInTop5: 0.02, injectedStale: 0 } as const;
/** Results scored per question. */
export const TOP_K = 5;
/** The memory types InjectForFile may inject (SPEC §7). */
const INJECTED_TYPES = new Set(['gotcha', 'error_pattern', 'dead_end', 'e2e_observation']);

/**
 * A result: the note it is ('' for none of them), whether it was shown stale/superseded, and the
 * notes folded under it as its history (the outdated memories it replaces; none: absent).
 */
export interface RankedKey {
  key: string;
  marked: boolean;
  history?: string[];
}

export interface QueryOutcome {
  query: TruthQuery;
  /** The results, best first. */
  ranked: RankedKey[];
  /** Note keys of the memories BuildContext put in for the same question. */
  context: string[];
}

export interface FileOutcome {
  file: TruthFile;
  injected: string[];
}

export interface ProjectOutcome {
  project: TruthProject;
  queries: QueryOutcome[];
  files: FileOutcome[];
}

export interface TruthScores {
  queries: number;
  /** Share of questions whose first result is the current fact. */
  top1: number;
  /**
   * Share of the results in the first five that are outdated (superseded or stale): what takes a
   * result slot. Outdated memories folded under a result as its history take none.
   */
  staleInTop5: number;
  /** The same, counting only those shown as current (without the stale/superseded marker). */
  unmarkedStaleInTop5: number;
  resultsInTop5: number;
  /**
   * Outdated results ranked above the question's current fact (or listed without it): what an
   * explicit search must never do. Marked, penalised stale results below the current fact are
   * what SPEC §7 asks a search to show; they count in `staleInTop5`, not here.
   */
  staleAboveCurrent: number;
  /**
   * Outdated memories shown as history, folded under one of the first five results (SPEC §7: an
   * explicit search still shows them, prefixed and penalised), over all questions.
   */
  shownAsHistory: number;
  /** Of those, the ones folded under the question's current fact. */
  historyUnderCurrent: number;
  /** Outdated memories injected for a file (InjectForFile). */
  injectedStaleForFile: number;
  /** Outdated memories BuildContext put in a context. */
  injectedStaleInContext: number;
  byKind: Record<FactKind, { queries: number; top1: number }>;
}

export function scoreTruth(outcomes: readonly ProjectOutcome[]): TruthScores {
  let queries = 0;
  let hits = 0;
  let results = 0;
  let staleResults = 0;
  let unmarkedStale = 0;
  let staleAboveCurrent = 0;
  let shownAsHistory = 0;
  let historyUnderCurrent = 0;
  let injectedStaleForFile = 0;
  let injectedStaleInContext = 0;
  const kinds = Object.fromEntries(FACT_KINDS.map((k) => [k, { queries: 0, hits: 0 }])) as Record<
    FactKind,
    { queries: number; hits: number }
  >;
  for (const { project, queries: asked, files } of outcomes) {
    const outdated = outdatedKeys(project);
    for (const { query, ranked, context } of asked) {
      queries += 1;
      kinds[query.kind].queries += 1;
      if (ranked[0]?.key === query.current) {
        hits += 1;
        kinds[query.kind].hits += 1;
      }
      const top = ranked.slice(0, TOP_K);
      results += top.length;
      staleResults += top.filter((r) => outdated.has(r.key)).length;
      unmarkedStale += top.filter((r) => outdated.has(r.key) && !r.marked).length;
      const current = top.findIndex((r) => r.key === query.current);
      staleAboveCurrent += top.filter(
        (r, i) => outdated.has(r.key) && (current === -1 || i < current),
      ).length;
      for (const result of top) {
        const history = (result.history ?? []).filter((key) => outdated.has(key)).length;
        shownAsHistory += history;
        if (result.key === query.current) historyUnderCurrent += history;
      }
      injectedStaleInContext += context.filter((key) => outdated.has(key)).length;
    }
    for (const { file, injected } of files) {
      injectedStaleForFile += injected.filter((key) => file.outdated.includes(key)).length;
    }
  }
  const byKind = Object.fromEntries(
    FACT_KINDS.map((k) => [
      k,
      { queries: kinds[k].queries, top1: ratio(kinds[k].hits, kinds[k].queries) },
    ]),
  ) as Record<FactKind, { queries: number; top1: number }>;
  return {
    queries,
    top1: ratio(hits, queries),
    staleInTop5: ratio(staleResults, results),
    unmarkedStaleInTop5: ratio(unmarkedStale, results),
    resultsInTop5: results,
    staleAboveCurrent,
    shownAsHistory,
    historyUnderCurrent,
    injectedStaleForFile,
    injectedStaleInContext,
    byKind,
  };
}

/** The targets the scores miss, by name (none: all met). */
export function unmetTargets(
  scores: TruthScores,
): ('top-1' | 'stale in top-5' | 'injected stale')[] {
  const unmet: ('top-1' | 'stale in top-5' | 'injected stale')[] = [];
  if (!(scores.top1 >= TRUTH_TARGETS.top1)) unmet.push('top-1');
  if (!(scores.staleInTop5 <= TRUTH_TARGETS.staleInTop5)) unmet.push('stale in top-5');
  if (injectedStale(scores) !== TRUTH_TARGETS.injectedStale) unmet.push('injected stale');
  return unmet;
}

/** Whether the scores meet the targets. */
export function meetsTargets(scores: TruthScores): boolean {
  return unmetTargets(scores).length === 0;
}

/** Outdated memories injected, by InjectForFile and BuildContext together. */
export function injectedStale(scores: TruthScores): number {
  return scores.injectedStaleForFile + scores.injectedStaleInContext;
}

/**
 * The baseline: every note ever taught, as first written (no rename, no staleness, no
 * supersession, no recency), ranked by plain BM25; injection by the file paths the notes were
 * written with; BuildContext's memories its first `contextMemories` results.
 */
export function baselineOutcome(project: TruthProject, contextMemories: number): ProjectOutcome {
  const notes = [...project.before, ...project.changes.filter(isNote)];
  const index = new NoteBm25(notes);
  return {
    project,
    queries: project.queries.map((query) => {
      const ranked = index.search(query.query);
      return {
        query,
        ranked: ranked.slice(0, TOP_K).map((key) => ({ key, marked: false })),
        context: ranked.slice(0, contextMemories),
      };
    }),
    files: project.files.map((file) => ({
      file,
      injected: notes
        .filter((n) => INJECTED_TYPES.has(n.memoryType) && n.relatedFiles.includes(file.path))
        .map((n) => n.key),
    })),
  };
}

function isNote(change: TruthProject['changes'][number]): change is TruthNote {
  return 'memoryType' in change;
}

const STOP = new Set(STOP_WORDS);

export function terms(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== '' && !STOP.has(t))
    .map((t) => stem(t));
}

class NoteBm25 {
  private readonly docs: { key: string; tf: Map<string, number>; length: number }[];
  private readonly df = new Map<string, number>();
  private readonly averageLength: number;

  constructor(notes: readonly TruthNote[]) {
    this.docs = notes.map((note) => {
      const tf = new Map<string, number>();
      const words = terms(note.text);
      for (const t of words) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return { key: note.key, tf, length: words.length };
    });
    this.averageLength = this.docs.reduce((sum, d) => sum + d.length, 0) / this.docs.length || 1;
  }

  search(query: string): string[] {
    const queryTerms = [...new Set(terms(query))];
    return this.docs
      .map((doc) => {
        let score = 0;
        for (const t of queryTerms) {
          const f = doc.tf.get(t) ?? 0;
          if (f === 0) continue;
          const idf = bm25Idf(this.docs.length, this.df.get(t) ?? 0);
          score += bm25TermScore(idf, f, doc.length, this.averageLength);
        }
        return { key: doc.key, score };
      })
      .filter((d) => d.score > 0)
      .sort((a, b) => b.score - a.score || a.key.localeCompare(b.key))
      .map((d) => d.key);
  }
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}
