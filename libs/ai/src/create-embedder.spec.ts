import { MisconfigurationError } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { createEmbedder } from './create-embedder';
import { OnnxMiniLmEmbedder } from './onnx-minilm-embedder';
import { OpenAiCompatibleEmbedder } from './openai-compatible-embedder';

describe('createEmbedder', () => {
  it('should build the OpenAI-compatible embedder for kind openai', async () => {
    const embedder = await createEmbedder({
      kind: 'openai',
      baseUrl: 'http://localhost:11434/v1',
      model: 'nomic-embed-text',
      dims: 768,
    });

    expect(embedder).toBeInstanceOf(OpenAiCompatibleEmbedder);
    expect(embedder).toMatchObject({ id: 'openai-compatible:nomic-embed-text', dims: 768 });
  });

  it('should load the local MiniLM model for kind minilm', async () => {
    const embedder = await createEmbedder({
      kind: 'minilm',
      modelsDir: process.env.ENGRAM_MODELS_DIR || undefined,
    });
    try {
      expect(embedder).toBeInstanceOf(OnnxMiniLmEmbedder);
      expect(embedder.dims).toBe(384);
    } finally {
      await (embedder as OnnxMiniLmEmbedder).dispose();
    }
  });

  it('should fail at creation, not at first use, when the model is missing', async () => {
    await expect(
      createEmbedder({ kind: 'minilm', modelsDir: '/nonexistent/engram-models' }),
    ).rejects.toBeInstanceOf(MisconfigurationError);
  });
});
