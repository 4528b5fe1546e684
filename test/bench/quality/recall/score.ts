/**
 * Evidence recall by provenance, as an external evaluator scores `engram recall --queries`: a
 * result hits an evidence turn when its provenance names that turn (its eventId, or its promptId
 * within its session). And the baseline a user gets without Engram: plain BM25 over the raw turns.
 */
import stem from 'wink-porter2-stemmer';
import { eng as STOP_WORDS } from 'stopword';
import type { BenchTurn } from './dataset';

/** The part of a recall result's provenance the scoring reads. */
export interface ResultProvenance {
  sessionIds: readonly string[];
  promptIds: readonly number[];
  eventIds: readonly string[];
}

export interface EvidenceScores {
  recall5: number;
  recall10: number;
  mrr: number;
  /**
   * Evidence found within the first 10 turns the results cite, results taken whole in rank
   * order: a result citing a whole conversation costs as many turns as it cites, so broad
   * provenance is no free hit (a list of single turns scores its recall@10 here).
   */
  recall10Turns: number;
  /** Turns cited by each of the first 5 results, on average. */
  citedTurns5: number;
}

/** The turns a result cites: its event ids, or its prompt ids when it names no event. */
function citedTurns(provenance: ResultProvenance): number {
  return Math.max(1, provenance.eventIds.length || provenance.promptIds.length);
}

/** The leading results whose cited turns add up to at most `budget`. */
function withinTurnBudget(
  results: readonly ResultProvenance[],
  budget: number,
): readonly ResultProvenance[] {
  let spent = 0;
  const taken: ResultProvenance[] = [];
  for (const result of results) {
    spent += citedTurns(result);
    if (spent > budget) break;
    taken.push(result);
  }
  return taken;
}

/** Whether a result's provenance covers this turn. */
export function covers(provenance: ResultProvenance, turn: BenchTurn): boolean {
  if (provenance.eventIds.includes(turn.eventId)) return true;
  return (
    provenance.sessionIds.includes(turn.sessionId) && provenance.promptIds.includes(turn.promptId)
  );
}

/**
 * recall@5, recall@10 (share of the evidence turns covered by the first k results) and the
 * reciprocal rank of the first result covering any evidence turn (0 when none in the list).
 */
export function scoreEvidence(
  results: readonly ResultProvenance[],
  evidence: readonly BenchTurn[],
): EvidenceScores {
  if (evidence.length === 0) throw new RangeError('a question needs at least one evidence turn');
  const found = (list: readonly ResultProvenance[]) =>
    evidence.filter((turn) => list.some((p) => covers(p, turn))).length / evidence.length;
  const first = results.findIndex((p) => evidence.some((turn) => covers(p, turn)));
  const top5 = results.slice(0, 5);
  return {
    recall5: found(top5),
    recall10: found(results.slice(0, 10)),
    mrr: first < 0 ? 0 : 1 / (first + 1),
    recall10Turns: found(withinTurnBudget(results, 10)),
    citedTurns5:
      top5.length === 0 ? 0 : top5.reduce((sum, p) => sum + citedTurns(p), 0) / top5.length,
  };
}

export function meanEvidence(rows: readonly EvidenceScores[]): EvidenceScores {
  const mean = (pick: (s: EvidenceScores) => number) =>
    rows.length === 0 ? 0 : rows.reduce((sum, row) => sum + pick(row), 0) / rows.length;
  return {
    recall5: mean((s) => s.recall5),
    recall10: mean((s) => s.recall10),
    mrr: mean((s) => s.mrr),
    recall10Turns: mean((s) => s.recall10Turns),
    citedTurns5: mean((s) => s.citedTurns5),
  };
}

const STOP = new Set(STOP_WORDS);

/** Lower case, letters and digits, no stop words, Porter2 stems. */
export function bm25Tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => !STOP.has(word))
    .map((word) => stem(word));
}

/** Okapi BM25 (k1 1.2, b 0.75, Lucene's idf) over one project's raw turns. */
export class TurnBm25 {
  private readonly docs: { turn: BenchTurn; tf: Map<string, number>; length: number }[];
  private readonly df = new Map<string, number>();
  private readonly averageLength: number;

  constructor(turns: readonly BenchTurn[]) {
    this.docs = turns.map((turn) => {
      const tokens = bm25Tokens(turn.text);
      const tf = new Map<string, number>();
      for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1);
      for (const token of tf.keys()) this.df.set(token, (this.df.get(token) ?? 0) + 1);
      return { turn, tf, length: tokens.length };
    });
    this.averageLength =
      this.docs.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, this.docs.length);
  }

  search(query: string, k: number): BenchTurn[] {
    const terms = [...new Set(bm25Tokens(query))];
    const n = this.docs.length;
    const scored = this.docs.map((doc) => {
      let score = 0;
      for (const term of terms) {
        const f = doc.tf.get(term);
        if (!f) continue;
        const df = this.df.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * doc.length) / this.averageLength));
      }
      return { doc, score };
    });
    return scored
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || a.doc.turn.eventId.localeCompare(b.doc.turn.eventId))
      .slice(0, k)
      .map((s) => s.doc.turn);
  }
}

/** A raw turn as a result: its own provenance. */
export function turnAsResult(turn: BenchTurn): ResultProvenance {
  return { sessionIds: [turn.sessionId], promptIds: [turn.promptId], eventIds: [turn.eventId] };
}
