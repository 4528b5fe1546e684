import { bm25Idf, bm25TermScore } from '@engram/core';

// The in-memory BM25 postings of one tier (LexicalIndexes in lexical-index.ts builds them and
// keeps them current): term → document slots and frequencies, each document's length and scope,
// walked in typed arrays with FTS5's formula so a query gets FTS5's scores and order.

/** One hit of the in-memory ranking: FTS5's row id, the document id, -bm25(). */
export interface LexicalHit {
  rid: number;
  id: string;
  score: number;
}

/**
 * The documents of one scope that have any of the query's terms, scored; best first on demand.
 * It reads the index's scratch arrays (no allocation per match): use it before the next search.
 */
export interface LexicalRanking {
  /** Documents scored (matching any term, in the scope). */
  readonly matched: number;
  /** The best `count`: score descending, ties by id (what `ORDER BY bm25(), id` gives). */
  top(count: number): LexicalHit[];
}

/** A document of the index: where it is, and its terms with their number of occurrences. */
export interface LexicalDocument {
  rid: number;
  id: string;
  scope: string;
  terms: ReadonlyMap<string, number>;
  /** Its length in tokens (FTS5's column size: every occurrence of every term). */
  length: number;
}

/**
 * What bm25() takes for N and the average length: FTS5's running totals of rows and tokens. On a
 * contentless table a delete does not take its row out of them (an update is a delete and an
 * insert), so they count every version ever written — the in-memory index uses the same numbers
 * to rank as FTS5 does.
 */
export interface Bm25Totals {
  rows: number;
  tokens: number;
}

/**
 * FTS5's averages record (`<table>_data` id 1): the row count, then each column's token count,
 * as SQLite varints (big-endian 7-bit groups, a 9th byte of 8 bits). Null if it does not parse.
 */
export function fts5Totals(block: Uint8Array | null | undefined): Bm25Totals | null {
  if (!block) return null;
  const values: number[] = [];
  let at = 0;
  while (at < block.length) {
    let value = 0;
    let i = 0;
    for (; i < 9 && at < block.length; i += 1) {
      const byte = block[at];
      at += 1;
      if (i === 8) {
        value = value * 256 + byte;
        break;
      }
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    values.push(value);
  }
  const [rows, ...columns] = values;
  if (rows === undefined || columns.length === 0) return null;
  return { rows, tokens: columns.reduce((a, b) => a + b, 0) };
}

/** The key of a tenant and project in the index. */
export function lexicalScope(tenantId: string, projectId: string): string {
  return JSON.stringify([tenantId, projectId]);
}

function grown<T extends Int32Array | Float64Array>(array: T, size: number): T {
  if (size <= array.length) return array;
  const next = new (array.constructor as new (length: number) => T)(
    Math.max(size, array.length * 2),
  );
  next.set(array);
  return next;
}

/** The slots (documents) that have one term, with the term's frequency in each. */
class TermPostings {
  slots = new Int32Array(4);
  frequencies = new Int32Array(4);
  size = 0;
  /** Live documents with the term, counted at `counted` (the index's version). */
  df = 0;
  counted = -1;

  push(slot: number, frequency: number): void {
    this.slots = grown(this.slots, this.size + 1);
    this.frequencies = grown(this.frequencies, this.size + 1);
    this.slots[this.size] = slot;
    this.frequencies[this.size] = frequency;
    this.size += 1;
  }
}

/**
 * The postings of one tier, in memory: every document has a slot (its row id, id, scope and
 * length); a removed document's slot is marked dead (length -1) and skipped until the next
 * compaction renumbers the slots. No SQLite here: `LexicalIndexes` feeds it.
 */
export class LexicalPostings {
  private readonly terms = new Map<string, TermPostings>();
  private readonly slotOfRid = new Map<number, number>();
  private readonly scopeIds = new Map<string, number>();
  private rids = new Float64Array(1024);
  private ids: string[] = [];
  private scopes = new Int32Array(1024);
  private lengths = new Int32Array(1024);
  private slots = 0;
  private live = 0;
  private tokens = 0;
  /** Bumped by every change: document frequencies are recounted when it moved. */
  private version = 0;
  /** Scratch of `search`, by slot: the score so far (0: not matched; a term adds > 0). */
  private scores = new Float64Array(0);
  /** Scratch of `search`: the slots matched, and their scores, in match order. */
  private matchedSlots = new Int32Array(0);
  private matchedScores = new Float64Array(0);

  /** Documents held (live: unlike FTS5's running total, deletes and updates are counted). */
  get documents(): number {
    return this.live;
  }

  /** The postings of the documents of a tier in FTS5's order (fts5vocab `instance` rows). */
  static fromInstances(
    documents: Iterable<{ rid: number; id: string; scope: string }>,
    instances: Iterable<readonly [term: string, rid: number]>,
  ): LexicalPostings {
    const index = new LexicalPostings();
    for (const doc of documents) index.addSlot(doc.rid, doc.id, doc.scope, 0);
    let postings: TermPostings | null = null;
    let term: string | null = null;
    let slot = -1;
    let frequency = 0;
    const flush = () => {
      if (postings && slot >= 0 && frequency > 0) postings.push(slot, frequency);
    };
    for (const [t, rid] of instances) {
      const next = index.slotOfRid.get(rid) ?? -1;
      if (t !== term || next !== slot) {
        flush();
        if (t !== term) {
          term = t;
          postings = index.postingsOf(t);
        }
        slot = next;
        frequency = 0;
      }
      if (slot < 0) continue; // a row not in the snapshot's documents (cannot happen in one)
      frequency += 1;
      index.lengths[slot] += 1;
      index.tokens += 1;
    }
    flush();
    return index;
  }

  /** Adds (or replaces) a document. */
  add(doc: LexicalDocument): void {
    this.remove(doc.rid);
    const slot = this.addSlot(doc.rid, doc.id, doc.scope, doc.length);
    for (const [term, frequency] of doc.terms) this.postingsOf(term).push(slot, frequency);
  }

  /** Removes a document, if held. */
  remove(rid: number): void {
    const slot = this.slotOfRid.get(rid);
    if (slot === undefined) return;
    this.slotOfRid.delete(rid);
    this.tokens -= this.lengths[slot];
    this.lengths[slot] = -1;
    this.live -= 1;
    this.version += 1;
  }

  /** Live documents that have the term (FTS5's hits of the phrase). */
  documentFrequency(term: string): number {
    const postings = this.terms.get(term);
    if (!postings) return 0;
    if (postings.counted !== this.version) {
      let df = 0;
      for (let i = 0; i < postings.size; i += 1) if (this.lengths[postings.slots[i]] >= 0) df += 1;
      postings.df = df;
      postings.counted = this.version;
    }
    return postings.df;
  }

  /**
   * The documents of `scope` with any of the terms (one per query phrase, in query order; a term
   * twice counts twice, as two FTS5 phrases do), scored as FTS5's bm25() scores them: with
   * FTS5's totals when given (N and the average length), else the documents held.
   */
  search(terms: readonly string[], scope: string, totals?: Bm25Totals | null): LexicalRanking {
    const scopeId = this.scopeIds.get(scope);
    const rids = this.rids;
    const ids = this.ids;
    if (scopeId === undefined || this.live === 0) {
      return rankingOf(rids, ids, new Int32Array(0), new Float64Array(0), 0);
    }
    this.scores = grown(this.scores, this.slots);
    this.matchedSlots = grown(this.matchedSlots, this.slots);
    const { scores, lengths, scopes, matchedSlots } = this;
    // One scope held (the usual embedded store): no need to look at each document's.
    const anyScope = this.scopeIds.size === 1;
    const fts5 = totals && totals.rows > 0 && totals.tokens > 0 ? totals : null;
    const rows = fts5?.rows ?? this.live;
    const averageLength = (fts5?.tokens ?? this.tokens) / rows;
    // Read once: a re-exported binding is a getter chain, too slow to call per posting.
    const termScore = bm25TermScore;
    let matched = 0;
    for (const term of terms) {
      const postings = this.terms.get(term);
      if (!postings) continue;
      const idf = bm25Idf(rows, this.documentFrequency(term));
      const { slots, frequencies, size } = postings;
      for (let i = 0; i < size; i += 1) {
        const slot = slots[i];
        const length = lengths[slot];
        if (length < 0 || (!anyScope && scopes[slot] !== scopeId)) continue;
        const before = scores[slot];
        if (before === 0) {
          matchedSlots[matched] = slot;
          matched += 1;
        }
        scores[slot] = before + termScore(idf, frequencies[i], length, averageLength);
      }
    }
    this.matchedScores = grown(this.matchedScores, matched);
    const matchedScores = this.matchedScores;
    for (let k = 0; k < matched; k += 1) {
      matchedScores[k] = scores[matchedSlots[k]];
      scores[matchedSlots[k]] = 0;
    }
    return rankingOf(rids, ids, matchedSlots, matchedScores, matched);
  }

  /** Renumbers the slots without the dead ones once they are a quarter of all (or 1,000+). */
  compactIfDue(): void {
    const dead = this.slots - this.live;
    if (dead < Math.max(1_000, this.live / 4)) return;
    const renumbered = new Int32Array(this.slots).fill(-1);
    const rids = new Float64Array(Math.max(1024, this.live));
    const scopes = new Int32Array(rids.length);
    const lengths = new Int32Array(rids.length);
    const ids: string[] = [];
    let next = 0;
    for (let slot = 0; slot < this.slots; slot += 1) {
      if (this.lengths[slot] < 0) continue;
      renumbered[slot] = next;
      rids[next] = this.rids[slot];
      scopes[next] = this.scopes[slot];
      lengths[next] = this.lengths[slot];
      ids.push(this.ids[slot]);
      this.slotOfRid.set(this.rids[slot], next);
      next += 1;
    }
    for (const [term, postings] of this.terms) {
      let kept = 0;
      for (let i = 0; i < postings.size; i += 1) {
        const slot = renumbered[postings.slots[i]];
        if (slot < 0) continue;
        postings.slots[kept] = slot;
        postings.frequencies[kept] = postings.frequencies[i];
        kept += 1;
      }
      if (kept === 0) this.terms.delete(term);
      postings.size = kept;
    }
    this.rids = rids;
    this.scopes = scopes;
    this.lengths = lengths;
    this.ids = ids;
    this.slots = next;
    this.scores = new Float64Array(0);
    this.matchedSlots = new Int32Array(0);
    this.version += 1;
  }

  private addSlot(rid: number, id: string, scope: string, length: number): number {
    const slot = this.slots;
    this.slots += 1;
    this.rids = grown(this.rids, this.slots);
    this.scopes = grown(this.scopes, this.slots);
    this.lengths = grown(this.lengths, this.slots);
    let scopeId = this.scopeIds.get(scope);
    if (scopeId === undefined) {
      scopeId = this.scopeIds.size;
      this.scopeIds.set(scope, scopeId);
    }
    this.rids[slot] = rid;
    this.ids[slot] = id;
    this.scopes[slot] = scopeId;
    this.lengths[slot] = length;
    this.slotOfRid.set(rid, slot);
    this.live += 1;
    this.tokens += length;
    this.version += 1;
    return slot;
  }

  private postingsOf(term: string): TermPostings {
    let postings = this.terms.get(term);
    if (!postings) {
      postings = new TermPostings();
      this.terms.set(term, postings);
    }
    return postings;
  }
}

/** The ranking of the first `matched` entries of `slots` (document slots) and `scores`. */
function rankingOf(
  rids: Float64Array,
  ids: readonly string[],
  slots: Int32Array,
  scores: Float64Array,
  matched: number,
): LexicalRanking {
  /** Whether entry `a` ranks after entry `b`: a lower score, or the same and a greater id. */
  const worse = (a: number, b: number) =>
    scores[a] < scores[b] || (scores[a] === scores[b] && ids[slots[a]] > ids[slots[b]]);
  return {
    matched,
    top(count: number): LexicalHit[] {
      // A heap of the best `count` entries so far, the worst at its root.
      const heap: number[] = [];
      const swap = (i: number, j: number) => {
        const entry = heap[i];
        heap[i] = heap[j];
        heap[j] = entry;
      };
      for (let k = 0; k < matched && count > 0; k += 1) {
        if (heap.length < count) {
          heap.push(k);
          for (let i = heap.length - 1; i > 0 && worse(heap[i], heap[(i - 1) >> 1]);) {
            swap(i, (i - 1) >> 1);
            i = (i - 1) >> 1;
          }
        } else if (scores[k] >= scores[heap[0]] && worse(heap[0], k)) {
          heap[0] = k;
          for (let i = 0; ;) {
            const left = 2 * i + 1;
            let worst = i;
            if (left < heap.length && worse(heap[left], heap[worst])) worst = left;
            if (left + 1 < heap.length && worse(heap[left + 1], heap[worst])) worst = left + 1;
            if (worst === i) break;
            swap(i, worst);
            i = worst;
          }
        }
      }
      return heap
        .sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0))
        .map((k) => ({ rid: rids[slots[k]], id: ids[slots[k]], score: scores[k] }));
    },
  };
}
