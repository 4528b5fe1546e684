import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import { storedVector, type ModelVector } from './model-vector';
import type { EpisodeDocument, MemoryDocument, TurnDocument } from './store-documents';

// The records the retrieval documents hold, back from a search's `_source`: the search fields
// (text, provenance, the packed vector) taken off again.

/**
 * The Memory a memories-tier document holds (its vector back in `embedding`/`embeddingModel`;
 * null for a kNN hit, which comes back without it).
 */
export function memoryFromSource(source: MemoryDocument): Memory {
  const {
    text: _text,
    provenance: _provenance,
    embeddingDims: _dims,
    embeddingPacked: _packed,
    ...memory
  } = source;
  return { ...memory, embedding: memory.embedding ?? null };
}

export function episodeFromSource(source: EpisodeDocument): Episode {
  const {
    text: _t,
    provenance: _p,
    embedding: _e,
    embeddingPacked: _k,
    embeddingModel: _m,
    embeddingDims: _d,
    ...episode
  } = source;
  return episode;
}

export function turnFromSource(source: TurnDocument): PromptSubmitted {
  const {
    provenance: _p,
    embedding: _e,
    embeddingPacked: _k,
    embeddingModel: _m,
    embeddingDims: _d,
    ...turn
  } = source;
  return turn;
}

/** The vector stored beside a document, with its model; null when it has none. */
export function vectorOfSource(source: {
  embedding: number[] | null;
  embeddingModel: string | null;
}): ModelVector | null {
  return storedVector(source.embedding, source.embeddingModel);
}
