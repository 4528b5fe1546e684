import { MisconfigurationError } from '@engram/core';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { chunk } from './batches';
import type { Embedder } from './embedder';
import { meanPoolNormalised, padBatch, type PaddedBatch } from './mean-pooling';
import {
  MINILM_ARTIFACT,
  MINILM_DIMS,
  MINILM_ID,
  MINILM_MAX_TOKENS,
  MODELS_SETUP_COMMAND,
  miniLmModelDir,
} from './minilm-artifact';
import { readMiniLmFiles } from './minilm-files';
import { MiniLmTokenizer } from './minilm-tokenizer';

export interface OnnxMiniLmOptions {
  /** Cache root that holds `all-minilm-l6-v2-q/` (default ~/.cache/engram/models). */
  modelsDir?: string;
  /**
   * Threads one inference may use (default 1). Measured on 2 cores: 2 threads are about 1.7×
   * faster while the other core is idle, but slower with p95 latencies of 10–100 ms as soon as
   * something else runs; Engram shares its cores with Kafka, Elasticsearch and Neo4j.
   */
  intraOpNumThreads?: number;
  /**
   * Texts per inference (default 1). The int8 model quantises its activations dynamically
   * (DynamicQuantizeLinear: one scale per whole batch tensor), so a text's vector shifts with its
   * batchmates and padding (measured: cosine 0.967–0.99 to itself embedded alone). At 1 a text always gets the same vector, which replays
   * and query-vs-stored comparisons need; batching bought only about 15% on short sentences.
   */
  maxBatchSize?: number;
  /** Tokens per text, [CLS] and [SEP] included (default and maximum 256, the training length). */
  maxTokens?: number;
  /** Check the files' sha256 against the pinned artifact at load (default true; about 20 ms). */
  verifyChecksums?: boolean;
}

interface Settings {
  modelDir: string;
  intraOpNumThreads: number;
  maxBatchSize: number;
  maxTokens: number;
  verifyChecksums: boolean;
}

/**
 * all-MiniLM-L6-v2 (int8 ONNX, 384 dims) in process with onnxruntime-node: no network at run time.
 * Load once with `OnnxMiniLmEmbedder.load()`; the session and tokenizer are reused by every call.
 */
export class OnnxMiniLmEmbedder implements Embedder {
  readonly id = MINILM_ID;
  readonly dims = MINILM_DIMS;

  private constructor(
    private readonly session: InferenceSession,
    private readonly tokenizer: MiniLmTokenizer,
    private readonly maxBatchSize: number,
  ) {}

  /** Fails with a MisconfigurationError naming the path and `npm run models:setup` if files are missing. */
  static async load(options: OnnxMiniLmOptions = {}): Promise<OnnxMiniLmEmbedder> {
    const settings = resolveSettings(options);
    const files = await readMiniLmFiles(settings.modelDir, settings.verifyChecksums);
    const session = await createSession(files.onnx, settings);
    assertModelShape(session, settings.modelDir);
    const tokenizer = new MiniLmTokenizer(files.tokenizer, settings.maxTokens);
    return new OnnxMiniLmEmbedder(session, tokenizer, settings.maxBatchSize);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const tokenIds = texts.map((text) => this.tokenizer.encode(text));
    const vectors = new Array<Float32Array>(texts.length);
    // Similar lengths share a batch, so little compute goes to padding; results go back in order.
    const order = [...tokenIds.keys()].sort((a, b) => tokenIds[a].length - tokenIds[b].length);
    for (const indices of chunk(order, this.maxBatchSize)) {
      const batchVectors = await this.embedBatch(indices.map((i) => tokenIds[i]));
      indices.forEach((textIndex, k) => (vectors[textIndex] = batchVectors[k]));
    }
    return vectors;
  }

  /** Frees the native session; the embedder is unusable afterwards. */
  async dispose(): Promise<void> {
    await this.session.release();
  }

  private async embedBatch(tokenIds: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const batch = padBatch(tokenIds);
    const result = await this.session.run(this.feeds(batch));
    const hidden = result[this.session.outputNames[0]];
    if (hidden.type !== 'float32' || hidden.dims.at(-1) !== this.dims) {
      throw new MisconfigurationError(
        `MiniLM model output is ${hidden.type} [${hidden.dims.join(', ')}], expected float32 [.., ${this.dims}]. ` +
          `Reinstall the model with \`${MODELS_SETUP_COMMAND}\`.`,
        { dims: hidden.dims },
      );
    }
    return meanPoolNormalised(hidden.data as Float32Array, batch, this.dims);
  }

  private feeds(batch: PaddedBatch): InferenceSession.FeedsType {
    const shape = [batch.rows, batch.cols];
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', batch.inputIds, shape),
      attention_mask: new Tensor('int64', batch.attentionMask, shape),
    };
    // BERT exports differ on whether they take segment ids; a single sentence is all segment 0.
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new Tensor('int64', new BigInt64Array(batch.rows * batch.cols), shape);
    }
    return feeds;
  }
}

function resolveSettings(options: OnnxMiniLmOptions): Settings {
  const settings = {
    modelDir: miniLmModelDir(options.modelsDir),
    intraOpNumThreads: options.intraOpNumThreads ?? 1,
    maxBatchSize: options.maxBatchSize ?? 1,
    maxTokens: options.maxTokens ?? MINILM_MAX_TOKENS,
    verifyChecksums: options.verifyChecksums ?? true,
  };
  assertIntegerIn('intraOpNumThreads', settings.intraOpNumThreads, 1, 64);
  assertIntegerIn('maxBatchSize', settings.maxBatchSize, 1, 1024);
  assertIntegerIn('maxTokens', settings.maxTokens, 2, MINILM_MAX_TOKENS);
  return settings;
}

function assertIntegerIn(name: string, value: number, min: number, max: number): void {
  if (Number.isInteger(value) && value >= min && value <= max) return;
  const message = `MiniLM embedder: ${name} must be an integer in [${min}, ${max}], got ${value}`;
  throw new MisconfigurationError(message, { [name]: value });
}

async function createSession(onnx: Uint8Array, settings: Settings): Promise<InferenceSession> {
  try {
    return await InferenceSession.create(onnx, {
      intraOpNumThreads: settings.intraOpNumThreads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
  } catch (error) {
    throw new MisconfigurationError(
      `ONNX runtime could not load ${settings.modelDir}/${MINILM_ARTIFACT.onnxFile}. ` +
        `Reinstall the model with \`${MODELS_SETUP_COMMAND}\`.`,
      { path: settings.modelDir, setupCommand: MODELS_SETUP_COMMAND },
      { cause: error },
    );
  }
}

/** A different BERT export would load fine and embed wrongly; refuse it at start-up instead. */
function assertModelShape(session: InferenceSession, modelDir: string): void {
  const missing = ['input_ids', 'attention_mask'].filter(
    (name) => !session.inputNames.includes(name),
  );
  if (missing.length === 0 && session.outputNames.length > 0) return;
  throw new MisconfigurationError(
    `${modelDir}/${MINILM_ARTIFACT.onnxFile} is not a BERT encoder (inputs ${session.inputNames.join(', ')}). ` +
      `Reinstall the model with \`${MODELS_SETUP_COMMAND}\`.`,
    { path: modelDir, inputNames: session.inputNames },
  );
}
