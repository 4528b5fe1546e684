export { chunk } from './batches';
export * from './create-embedder';
export * from './embedder.module';
export * from './embedder';
export * from './errors';
export * from './measure-embedder';
export {
  defaultModelsDir,
  MINILM_ARTIFACT,
  MINILM_DIMS,
  MINILM_ID,
  MINILM_MAX_TOKENS,
  miniLmModelDir,
  MODELS_SETUP_COMMAND,
} from './minilm-artifact';
export * from './model-install';
export * from './onnx-minilm-embedder';
export * from './openai-compatible-embedder';
export { parseEmbeddingsReply } from './openai-wire';
export * from './llm';
