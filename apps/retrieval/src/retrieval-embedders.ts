import { createEmbedder, type Embedder } from '@engram/ai';
import { errorMessage, MisconfigurationError } from '@engram/core';
import { Logger } from '@nestjs/common';

/**
 * The embedder of a machine without the model: no vectors at all. Documents are indexed without
 * one (BM25 finds them; `engram reindex` embeds them later), and a query's empty vector makes
 * the store search lexically only.
 */
export const LEXICAL_ONLY_EMBEDDER: Embedder = {
  id: 'none',
  dims: 0,
  embed: (texts) => Promise.resolve(texts.map(() => new Float32Array(0))),
};

/**
 * The local MiniLM model if it is installed (`npm run models:setup`), else the lexical-only
 * embedder, said once in the log: embedded mode must work on a fresh machine (`npx engram demo`
 * right after `npm ci`), where recall then runs on BM25 alone.
 */
export async function embeddedEmbedder(
  logger: { warn(message: string): void } = new Logger('Retrieval'),
): Promise<Embedder> {
  try {
    return await createEmbedder();
  } catch (error) {
    if (!(error instanceof MisconfigurationError)) throw error;
    logger.warn(`recall runs on BM25 only (no kNN): ${errorMessage(error)}`);
    return LEXICAL_ONLY_EMBEDDER;
  }
}
