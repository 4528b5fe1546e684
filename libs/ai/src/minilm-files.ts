import { MisconfigurationError } from '@engram/core';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MINILM_ARTIFACT, MODELS_SETUP_COMMAND } from './minilm-artifact';

export interface MiniLmFiles {
  /** The ONNX graph, read once so it is hashed and handed to the runtime without a second read. */
  onnx: Uint8Array;
  /** The parsed tokenizer.json (Hugging Face tokenizers format). */
  tokenizer: Record<string, unknown>;
}

/**
 * Reads the model and tokenizer from `modelDir`. Missing, unreadable or (when `verify`) altered
 * files fail start-up with the path and the command that installs them: an embedder must never
 * fall back silently to another model, whose vectors would not be comparable.
 */
export async function readMiniLmFiles(modelDir: string, verify = true): Promise<MiniLmFiles> {
  const onnxPath = join(modelDir, MINILM_ARTIFACT.onnxFile);
  const tokenizerPath = join(modelDir, MINILM_ARTIFACT.tokenizerFile);
  // Both read at once, but a failure is reported in file order (the model first), not in the
  // order the reads happen to fail: the same missing install always gives the same message.
  const [onnxRead, tokenizerRead] = await Promise.allSettled([
    readModelFile(onnxPath),
    readModelFile(tokenizerPath),
  ]);
  if (onnxRead.status === 'rejected') throw onnxRead.reason;
  if (tokenizerRead.status === 'rejected') throw tokenizerRead.reason;
  const onnx = onnxRead.value;
  const tokenizerBytes = tokenizerRead.value;
  if (verify) {
    assertSha256(onnxPath, onnx, MINILM_ARTIFACT.onnxSha256);
    assertSha256(tokenizerPath, tokenizerBytes, MINILM_ARTIFACT.tokenizerSha256);
  }
  return { onnx, tokenizer: parseTokenizer(tokenizerPath, tokenizerBytes) };
}

async function readModelFile(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new MisconfigurationError(
      `Embedding model file ${path} is missing or unreadable. Install the model with ` +
        `\`${MODELS_SETUP_COMMAND}\` (set ENGRAM_MODELS_DIR to the same directory for both, ` +
        `or leave it unset for ~/.cache/engram/models).`,
      { path, setupCommand: MODELS_SETUP_COMMAND },
      { cause: error },
    );
  }
}

function assertSha256(path: string, bytes: Uint8Array, expected: string): void {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual === expected) return;
  throw new MisconfigurationError(
    `Embedding model file ${path} is not the pinned ${MINILM_ARTIFACT.name}@` +
      `${MINILM_ARTIFACT.version} (sha256 ${actual}, expected ${expected}). ` +
      `Reinstall it with \`${MODELS_SETUP_COMMAND}\`.`,
    { path, actual, expected, setupCommand: MODELS_SETUP_COMMAND },
  );
}

function parseTokenizer(path: string, bytes: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(bytes.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null) return parsed as Record<string, unknown>;
    throw new TypeError('not a JSON object');
  } catch (error) {
    throw new MisconfigurationError(
      `Tokenizer file ${path} is not valid tokenizer JSON. Reinstall it with \`${MODELS_SETUP_COMMAND}\`.`,
      { path, setupCommand: MODELS_SETUP_COMMAND },
      { cause: error },
    );
  }
}
