/**
 * A disk cache of prompt embeddings for the segmentation benchmark, so a tuning sweep embeds each
 * text once: `<dir>/<model>.keys` (one sha1 of the text per line) and `<dir>/<model>.f32` (the
 * vectors, in the same order, float32). Git-ignored under .cache/.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export type EmbedTexts = (texts: readonly string[]) => Promise<readonly ArrayLike<number>[]>;

const keyOf = (text: string): string => createHash('sha1').update(text).digest('hex');

export class EmbeddingCache {
  private readonly vectors = new Map<string, number[]>();
  private readonly keysPath: string;
  private readonly vectorsPath: string;

  constructor(
    dir: string,
    model: string,
    private readonly dims: number,
  ) {
    mkdirSync(dir, { recursive: true });
    this.keysPath = join(dir, `${model}.keys`);
    this.vectorsPath = join(dir, `${model}.f32`);
    this.load();
  }

  get size(): number {
    return this.vectors.size;
  }

  /** Embeds the texts not cached yet (in batches of `batch`) and stores them. */
  async fill(texts: readonly string[], embed: EmbedTexts, batch = 256): Promise<number> {
    const missing = [...new Set(texts)].filter((text) => !this.vectors.has(keyOf(text)));
    for (let start = 0; start < missing.length; start += batch) {
      const slice = missing.slice(start, start + batch);
      const vectors = await embed(slice);
      const keys = slice.map(keyOf);
      const floats = new Float32Array(slice.length * this.dims);
      vectors.forEach((vector, i) => floats.set(Array.from(vector), i * this.dims));
      appendFileSync(this.vectorsPath, Buffer.from(floats.buffer));
      appendFileSync(this.keysPath, keys.map((key) => `${key}\n`).join(''));
      keys.forEach((key, i) =>
        this.vectors.set(key, Array.from(floats.subarray(i * this.dims, (i + 1) * this.dims))),
      );
    }
    return missing.length;
  }

  get(text: string): number[] | undefined {
    return this.vectors.get(keyOf(text));
  }

  /** An embedder over the cache only: a text that was not filled is an error (a rejection). */
  lookup(texts: readonly string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (const text of texts) {
      const vector = this.get(text);
      if (!vector) {
        return Promise.reject(
          new Error(`no cached embedding for ${JSON.stringify(text.slice(0, 60))}`),
        );
      }
      vectors.push(vector);
    }
    return Promise.resolve(vectors);
  }

  private load(): void {
    if (!existsSync(this.keysPath) || !existsSync(this.vectorsPath)) return;
    const keys = readFileSync(this.keysPath, 'utf8').split('\n').filter(Boolean);
    const bytes = readFileSync(this.vectorsPath);
    const floats = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4));
    if (keys.length * this.dims !== floats.length) {
      // A run killed between the two appends: the files disagree, start over.
      rmSync(this.keysPath, { force: true });
      rmSync(this.vectorsPath, { force: true });
      return;
    }
    for (let i = 0; i < keys.length; i += 1) {
      this.vectors.set(keys[i], Array.from(floats.subarray(i * this.dims, (i + 1) * this.dims)));
    }
  }
}
