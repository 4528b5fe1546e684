import { EmbeddingServiceError } from './errors';

/**
 * The OpenAI embeddings wire format, which Ollama (`/v1`), vLLM, TEI and OpenAI all speak:
 * request `{ model, input: [texts] }`, reply `{ data: [{ embedding: number[], index }], … }`.
 */
export interface EmbeddingsRequest {
  model: string;
  input: string[];
}

/**
 * The vectors of a reply in input order. `index` says which input each item embeds (servers need
 * not keep order); an item without one is taken in position. Anything else is a broken reply.
 */
export function parseEmbeddingsReply(body: unknown, inputCount: number): number[][] {
  const items = replyItems(body);
  if (items.length !== inputCount) {
    throw brokenReply(`${items.length} embeddings for ${inputCount} inputs`);
  }
  const vectors = new Array<number[] | undefined>(inputCount);
  items.forEach((item, position) => {
    const index = itemIndex(item, position, inputCount);
    if (vectors[index] !== undefined) throw brokenReply(`index ${index} appears twice`);
    vectors[index] = itemEmbedding(item, index);
  });
  return vectors as number[][];
}

function replyItems(body: unknown): Record<string, unknown>[] {
  const data = isRecord(body) ? body.data : undefined;
  if (!Array.isArray(data) || !data.every(isRecord)) {
    throw brokenReply('no "data" array of embedding objects');
  }
  return data;
}

function itemIndex(item: Record<string, unknown>, position: number, count: number): number {
  const index = item.index ?? position;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) {
    throw brokenReply(`index ${JSON.stringify(index)} is not an input position in [0, ${count})`);
  }
  return index;
}

function itemEmbedding(item: Record<string, unknown>, index: number): number[] {
  const embedding = item.embedding;
  if (!Array.isArray(embedding) || embedding.length === 0) {
    throw brokenReply(`embedding ${index} is not a non-empty array of numbers`);
  }
  if (!embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw brokenReply(`embedding ${index} holds a value that is not a finite number`);
  }
  return embedding as number[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function brokenReply(problem: string): EmbeddingServiceError {
  return new EmbeddingServiceError(
    `embedding service reply is not an embeddings reply: ${problem}`,
  );
}
