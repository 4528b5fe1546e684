import type { Embedder } from '@engram/ai';
import { modelVector, type EmbedNoteTexts } from '@engram/core';

/**
 * Session notes' vectors from the recall server's model (a query is embedded by the same, so a
 * paraphrase finds the note); null for a text the model gave nothing for (no model: dimension 0),
 * and null as a whole without a model. Failures reach the caller, who holds the note lexical-only.
 */
export function embedNoteTextsWith(embedder: Embedder | null | undefined): EmbedNoteTexts | null {
  if (!embedder) return null;
  return async (texts) => {
    const vectors = await embedder.embed(texts);
    return texts.map((_, i) => {
      const vector = vectors[i];
      return vector && vector.length > 0 ? modelVector(embedder.id, Array.from(vector)) : null;
    });
  };
}
