import { createEmbedder } from '@engram/ai';
import type { SegmentationMode } from '@engram/core';
import type { EmbedBatch } from './commands/segment.command';

/**
 * The embedder hybrid segmentation uses (the local MiniLM model; `npm run models:setup` puts it in
 * place); keyword mode needs none. A missing model stops the command with the setup command.
 */
export async function embedderForMode(mode: SegmentationMode): Promise<EmbedBatch | undefined> {
  if (mode === 'keyword') return undefined;
  const embedder = await createEmbedder();
  return async (texts) => (await embedder.embed(texts)).map((vector) => Array.from(vector));
}
