import type { Memory, Typed } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import type { MemoryFilter } from './memory-filter';
import { modelCosine, storedVector, vectorMismatch, type ModelVector } from './model-vector';
import { rankMemories, type RankedMemory } from './rank-memories';
import type { RankingConfig } from './ranking-config';
import { contentStems, queryCoverage } from './recall-merge';
import { compareText } from './ordering';
import { isUserTaught, namesOwnSession, userTaughtMemory, type RememberRequest } from './remember';
import type { RankedHit } from './rrf';
import type { SessionNote } from './session-note-pad';
import type { UniversalPhase } from './universal-phase';

// The scratchpad tier (seed 002 §8): an agent's Remember is recallable in its own session at once,
// before the observer validates it into a memory. What becomes a note, what it looks like as a
// memory, how notes rank against a query, and when a note gives way to its validated memory.

/** The tag every session note carries (MemoryItem.tags): it is not a validated memory yet. */
export const SESSION_NOTE_TAG = 'session_note';
/** Display text of a session note, as `[STALE — …]` is of a stale memory. */
export const SESSION_NOTE_PREFIX = '[SESSION NOTE — not yet validated]';
/**
 * As confident as the note will be once its work validates (an agent_explicit memory's fixed
 * confidence): the session that wrote it trusts it, and nobody else is shown it.
 */
export const SESSION_NOTE_CONFIDENCE = 0.9;

/**
 * Whether a Remember becomes a session note: an agent's note of a session of its own (a person's
 * teaching is a memory at once; a note without a session has no session to be recalled in).
 */
export function isSessionNoteRequest(request: RememberRequest): boolean {
  return !isUserTaught(request) && namesOwnSession(request);
}

/**
 * The session note of a Remember, or null when it is not one (isSessionNoteRequest). `embedding`
 * is the note's vector when the server could compute one (null: the note matches lexically only).
 */
export function sessionNoteOf(
  request: RememberRequest,
  event: Typed<'RememberRequested'>,
  embedding: ModelVector | null,
): SessionNote | null {
  if (!isSessionNoteRequest(request)) return null;
  return {
    scope: request.scope,
    sessionId: request.sessionId,
    memory: sessionNoteMemory(request, event, embedding),
  };
}

/**
 * The note as a memory, to be ranked and shown like one: the memory a Remember becomes (same
 * content, type, files and id — memoryIdOf, as the observer's remember_request rule names the
 * validated one), marked as a session note (scope `session`, tag, not user-verified).
 */
function sessionNoteMemory(
  request: RememberRequest,
  event: Typed<'RememberRequested'>,
  embedding: ModelVector | null,
): Memory {
  return {
    ...userTaughtMemory(request, event),
    eventId: idOf('session-note', event.eventId),
    source: 'agent_explicit',
    scope: 'session',
    tags: [SESSION_NOTE_TAG],
    confidence: SESSION_NOTE_CONFIDENCE,
    userVerified: false,
    embedding: embedding ? Array.from(embedding.vector) : null,
    embeddingModel: embedding?.model ?? null,
  };
}

/** Whether a memory is a session note (not a stored, validated memory). */
export function isSessionNote(memory: Memory): boolean {
  return memory.scope === 'session' && memory.tags.includes(SESSION_NOTE_TAG);
}

/**
 * The notes whose validated memory is not among `storedMemoryIds` (the store's memories at hand:
 * a recall's candidates); the others are shown, or filtered out, as that memory.
 */
export function notesAwaitingValidation(
  notes: readonly SessionNote[],
  storedMemoryIds: ReadonlySet<string>,
): SessionNote[] {
  return notes.filter((note) => !storedMemoryIds.has(note.memory.memoryId));
}

export interface RankSessionNotesInput {
  notes: readonly SessionNote[];
  query: string;
  /** The query's embedding; null or dimension 0: a lexical-only recall. */
  vector: ModelVector | null;
  filter: MemoryFilter;
  phase: UniversalPhase;
  now: number;
  /** The cosine below which a note is no semantic match (the store's kNN floor). */
  minSimilarity: number;
}

/**
 * The session's notes ranked for a query as memories are (rankMemories: the same filter, fusion,
 * priors and phase), from two lists computed here — a session holds a few dozen notes at most:
 * lexical, the notes sharing a content word with the query by query-term coverage; semantic, the
 * notes whose embedding is at least `minSimilarity` from the query's. Shown with the prefix.
 */
export function rankSessionNotes(
  input: RankSessionNotesInput,
  config: RankingConfig,
): RankedMemory[] {
  if (input.notes.length === 0) return [];
  const memories = input.notes.map((note) => note.memory);
  const vector = input.vector && input.vector.dimension > 0 ? input.vector : null;
  const ranked = rankMemories(
    {
      filter: input.filter,
      phase: input.phase,
      now: input.now,
      bm25: lexicalHits(memories, input.query),
      knn: vector ? semanticHits(memories, vector, input.minSimilarity) : null,
      query: vector,
      memories,
    },
    config,
  );
  return ranked.map((hit) => ({ ...hit, content: `${SESSION_NOTE_PREFIX} ${hit.content}` }));
}

function lexicalHits(memories: readonly Memory[], query: string): RankedHit[] {
  const coverage = queryCoverage(
    contentStems(query),
    memories.map((memory) => contentStems(memory.content)),
  );
  return byScoreThenId(
    memories.flatMap((memory, i) =>
      coverage[i] > 0 ? [{ id: memory.memoryId, score: coverage[i] }] : [],
    ),
  );
}

function semanticHits(
  memories: readonly Memory[],
  query: ModelVector,
  minSimilarity: number,
): RankedHit[] {
  return byScoreThenId(
    memories.flatMap((memory) => {
      const own = storedVector(memory.embedding, memory.embeddingModel);
      if (own === null || vectorMismatch(own, query) !== null) return [];
      const similarity = modelCosine(own, query);
      return similarity >= minSimilarity
        ? [{ id: memory.memoryId, score: similarity, similarity }]
        : [];
    }),
  );
}

function byScoreThenId(hits: RankedHit[]): RankedHit[] {
  return hits.sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || compareText(a.id, b.id));
}
