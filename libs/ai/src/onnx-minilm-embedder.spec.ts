import { cosine, l2Norm, MisconfigurationError } from '@engram/core';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANITY_TEXTS } from './measure-embedder';
import { MINILM_ARTIFACT, miniLmModelDir } from './minilm-artifact';
import { OnnxMiniLmEmbedder } from './onnx-minilm-embedder';

// The real model, from the cache `npm run models:setup` fills. Missing files fail this suite with
// that command in the message; they never skip it, so a green run always means the model ran.
const modelsDir = process.env.ENGRAM_MODELS_DIR || undefined;

describe('OnnxMiniLmEmbedder (real all-MiniLM-L6-v2 int8 model)', () => {
  let embedder: OnnxMiniLmEmbedder;

  beforeAll(async () => {
    embedder = await OnnxMiniLmEmbedder.load({ modelsDir });
  });
  afterAll(() => embedder?.dispose());

  it('should name the pinned artifact and give 384 dims', () => {
    expect(embedder.id).toBe(`all-minilm-l6-v2-q@${MINILM_ARTIFACT.version}`);
    expect(embedder.dims).toBe(384);
  });

  it('should return one unit-length 384-dim vector per text, in order', async () => {
    const texts = ['fix the auth bug', 'upgrade nestjs to version 11', ''];
    const vectors = await embedder.embed(texts);
    const reversed = await embedder.embed([...texts].reverse());

    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(384);
      expect(l2Norm(vector)).toBeCloseTo(1, 5);
    }
    expect(reversed.reverse()).toEqual(vectors);
  });

  it('should be deterministic: the same text always gets the same vector, whatever else is in the call', async () => {
    const [alone] = await embedder.embed(['debug the login failure']);
    const again = await embedder.embed([
      'a much longer neighbour sentence about kafka rebalances',
      'debug the login failure',
    ]);

    expect(Array.from(again[1])).toEqual(Array.from(alone));
  });

  it('should place related developer requests far closer than unrelated ones', async () => {
    const [anchor, related, unrelated] = await embedder.embed(SANITY_TEXTS);
    const margin = cosine(anchor, related) - cosine(anchor, unrelated);

    expect(margin).toBeGreaterThan(0.2);
  });

  it('should truncate past 256 tokens, so anything after them changes nothing', async () => {
    const [long, longer] = await embedder.embed(['word '.repeat(300), 'word '.repeat(600)]);
    const [short] = await embedder.embed(['word '.repeat(100)]);

    expect(Array.from(longer)).toEqual(Array.from(long));
    expect(cosine(long, short)).toBeLessThan(0.9999);
  });

  it('should return nothing for no texts', async () => {
    await expect(embedder.embed([])).resolves.toEqual([]);
  });

  it('should batch when asked, in order, close to the unbatched vectors', async () => {
    const batched = await OnnxMiniLmEmbedder.load({ modelsDir, maxBatchSize: 8 });
    try {
      const texts = Array.from(
        { length: 11 },
        (_, i) => `request number ${i}: ${'fix the flaky test '.repeat(i)}`,
      );
      const together = await batched.embed(texts);
      const alone = await embedder.embed(texts);

      // Not equal: the int8 model quantises each batch tensor with one scale (see maxBatchSize).
      together.forEach((vector, i) => expect(cosine(vector, alone[i])).toBeGreaterThan(0.95));
    } finally {
      await batched.dispose();
    }
  });
});

describe('OnnxMiniLmEmbedder start-up failures', () => {
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'engram-minilm-'));
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('should fail loudly with the path and the setup command when the model is missing', async () => {
    const empty = join(scratch, 'empty');
    const failure = OnnxMiniLmEmbedder.load({ modelsDir: empty });

    await expect(failure).rejects.toBeInstanceOf(MisconfigurationError);
    await expect(failure).rejects.toThrow(
      join(empty, 'all-minilm-l6-v2-q', MINILM_ARTIFACT.onnxFile),
    );
    await expect(failure).rejects.toThrow('npm run models:setup');
  });

  it('should refuse files that are not the pinned artifact', async () => {
    const altered = join(scratch, 'altered');
    const dir = miniLmModelDir(altered);
    const real = miniLmModelDir(modelsDir);
    await mkdir(dir, { recursive: true });
    await symlink(join(real, MINILM_ARTIFACT.onnxFile), join(dir, MINILM_ARTIFACT.onnxFile));
    await copyFile(
      join(real, MINILM_ARTIFACT.tokenizerFile),
      join(dir, MINILM_ARTIFACT.tokenizerFile),
    );
    await writeFile(join(dir, MINILM_ARTIFACT.tokenizerFile), ' ', { flag: 'a' });

    await expect(OnnxMiniLmEmbedder.load({ modelsDir: altered })).rejects.toThrow(
      /is not the pinned all-minilm-l6-v2-q@.*npm run models:setup/,
    );
  });

  it('should refuse settings outside their range', async () => {
    await expect(OnnxMiniLmEmbedder.load({ modelsDir, maxTokens: 512 })).rejects.toThrow(
      /maxTokens must be an integer in \[2, 256\], got 512/,
    );
    await expect(OnnxMiniLmEmbedder.load({ modelsDir, maxBatchSize: 0 })).rejects.toBeInstanceOf(
      MisconfigurationError,
    );
  });
});
