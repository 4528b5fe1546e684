import type { Embedder } from './embedder';
import { OnnxMiniLmEmbedder, type OnnxMiniLmOptions } from './onnx-minilm-embedder';
import {
  OpenAiCompatibleEmbedder,
  type OpenAiCompatibleOptions,
} from './openai-compatible-embedder';

/**
 * Which embedder to use, with its settings; libs/config maps the environment onto it. `minilm`
 * (local, offline) is the default; `openai` is any OpenAI-compatible embeddings server.
 */
export type EmbedderConfig =
  ({ kind: 'minilm' } & OnnxMiniLmOptions) | ({ kind: 'openai' } & OpenAiCompatibleOptions);

export const DEFAULT_EMBEDDER_CONFIG: EmbedderConfig = { kind: 'minilm' };

/** Builds the configured embedder; a missing model or bad setting fails here, at start-up. */
export async function createEmbedder(
  config: EmbedderConfig = DEFAULT_EMBEDDER_CONFIG,
): Promise<Embedder> {
  switch (config.kind) {
    case 'minilm':
      return OnnxMiniLmEmbedder.load(config);
    case 'openai':
      return Promise.resolve(new OpenAiCompatibleEmbedder(config));
  }
}
