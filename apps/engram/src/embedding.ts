import type { SegmentationMode } from '@engram/core';
import type { EmbedBatch } from './commands/segment.command';

/** The embedder hybrid segmentation uses; keyword mode needs none. */
export function embedderForMode(mode: SegmentationMode): Promise<EmbedBatch | undefined> {
  if (mode === 'keyword') return Promise.resolve(undefined);
  return Promise.reject(
    new Error('hybrid mode needs the embedding model (libs/ai), not wired yet'),
  );
}
