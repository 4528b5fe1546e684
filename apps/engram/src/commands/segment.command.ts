import { decodeReplayLine, ReplayLineError, type PromptSubmitted } from '@engram/contracts';
import {
  InvalidEventError,
  segmenterSettings,
  StreamSegmenter,
  type PromptDecision,
  type SegmentationMode,
  type SegmenterSettings,
} from '@engram/core';
import { Option, type Command } from 'commander';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { once } from 'node:events';

/** Embeds a batch of prompt texts for hybrid mode (one vector per text, in order). */
export type EmbedBatch = (texts: readonly string[]) => Promise<readonly (readonly number[])[]>;

export interface SegmentRunOptions {
  mode: SegmentationMode;
  /** Overrides of the segmenter settings (tuning runs); defaults are the service's. */
  overrides?: Partial<SegmenterSettings>;
  input: Readable;
  output: Writable;
  errors: Writable;
  /** Required in hybrid mode. */
  embed?: EmbedBatch;
  /** Prompts embedded per batch in hybrid mode. */
  batchSize?: number;
}

export interface SegmentRunSummary {
  prompts: number;
  rejected: number;
  boundaries: number;
}

/** The decision line of SPEC §12, in its documented key order. */
function decisionLine(decision: PromptDecision): string {
  const { eventId, sessionId, promptId, threadId, episodeId, boundary, reason, similarity } =
    decision;
  return JSON.stringify({
    eventId,
    sessionId,
    promptId,
    threadId,
    episodeId,
    boundary,
    reason,
    similarity,
  });
}

/**
 * `engram segment`: PromptSubmitted JSON lines in, one decision line per prompt out, through the
 * same core as the service. Memory holds only open sessions (idle ones are swept). A line that
 * is not a valid prompt (or cannot be placed, e.g. an out-of-order promptId) is reported on
 * stderr with its line number and produces no decision line.
 */
export async function runSegment(options: SegmentRunOptions): Promise<SegmentRunSummary> {
  // hybrid without an embedder is the no-model fallback: the learned rule's lexical model.
  const segmenter = new StreamSegmenter({
    settings: segmenterSettings({ ...options.overrides, mode: options.mode }),
  });
  const summary: SegmentRunSummary = { prompts: 0, rejected: 0, boundaries: 0 };
  const batchSize = options.mode === 'hybrid' ? (options.batchSize ?? 32) : 1;
  let batch: Array<{ line: number; prompt: PromptSubmitted }> = [];

  const write = async (text: string): Promise<void> => {
    if (!options.output.write(`${text}\n`)) await once(options.output, 'drain');
  };
  const reject = (line: number, message: string): void => {
    summary.rejected += 1;
    options.errors.write(`line ${line}: ${message}\n`);
  };
  const flush = async (): Promise<void> => {
    const embeddings = options.embed ? await options.embed(batch.map((b) => b.prompt.text)) : null;
    for (const [i, { line, prompt }] of batch.entries()) {
      try {
        const { decision } = segmenter.push(prompt, embeddings?.[i] ?? null);
        summary.prompts += 1;
        if (decision.boundary) summary.boundaries += 1;
        await write(decisionLine(decision));
      } catch (error) {
        if (!(error instanceof InvalidEventError)) throw error;
        reject(line, error.message);
      }
    }
    batch = [];
  };

  let lineNumber = 0;
  for await (const text of createInterface({ input: options.input, crlfDelay: Infinity })) {
    lineNumber += 1;
    if (text.trim() === '') continue;
    try {
      const { event } = decodeReplayLine(text, lineNumber, { defaultType: 'PromptSubmitted' });
      if (event.type !== 'PromptSubmitted') {
        reject(lineNumber, `expected a PromptSubmitted, got ${event.type}`);
        continue;
      }
      batch.push({ line: lineNumber, prompt: event });
    } catch (error) {
      if (!(error instanceof ReplayLineError)) throw error;
      summary.rejected += 1;
      options.errors.write(`${error.message}\n`); // already "line N: …"
      continue;
    }
    if (batch.length >= batchSize) await flush();
  }
  if (batch.length > 0) await flush();
  return summary;
}

/**
 * The mode of `engram segment` without `--mode`: hybrid, which won on the segmentation benchmark
 * (test/bench/quality/segmentation.ts, issue #23); without the model, hybrid's lexical model.
 */
export const DEFAULT_SEGMENT_MODE: SegmentationMode = 'hybrid';

/**
 * The mode and embedder a run uses. An explicit `--mode` is obeyed (hybrid without its model
 * fails with the setup command); the default keeps hybrid's learned rule on its lexical features
 * alone when the embedder cannot be loaded (seed 000's keyword rule over-splits: Pk worse than
 * never splitting on every public set), and says so on `errors`.
 */
export async function resolveSegmentMode(
  requested: SegmentationMode | undefined,
  embedderFor: (mode: SegmentationMode) => Promise<EmbedBatch | undefined>,
  errors: Writable,
): Promise<{ mode: SegmentationMode; embed: EmbedBatch | undefined }> {
  if (requested !== undefined) return { mode: requested, embed: await embedderFor(requested) };
  try {
    return { mode: DEFAULT_SEGMENT_MODE, embed: await embedderFor(DEFAULT_SEGMENT_MODE) };
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    errors.write(
      `engram segment: the embedding model is missing (${reason}); ${DEFAULT_SEGMENT_MODE} mode ` +
        'decides on keywords, episode length and gaps alone. Install the model with ' +
        "`npm run models:setup`, or pass --mode keyword for seed 000's rule.\n",
    );
    return { mode: DEFAULT_SEGMENT_MODE, embed: undefined };
  }
}

export function registerSegmentCommand(
  program: Command,
  embedderFor: (mode: SegmentationMode) => Promise<EmbedBatch | undefined>,
): void {
  program
    .command('segment')
    .description(
      'segment PromptSubmitted JSON lines (stdin) into episodes; one decision JSON line per prompt (stdout)',
    )
    .addOption(
      new Option(
        '--mode <mode>',
        'boundary rule: seed 000 keywords, or hybrid (default: learned rule on embeddings + keywords; keywords alone when the model is missing)',
      ).choices(['keyword', 'hybrid']),
    )
    .option(
      '--threshold <n>',
      'boundary threshold on the similarity (default: keyword 0.3, hybrid 0.15)',
      parseFloat,
    )
    .option(
      '--min-keywords <n>',
      'prompts with fewer intent keywords continue the episode (default: keyword 4, hybrid 5)',
      (v) => Number.parseInt(v, 10),
    )
    .option(
      '--embedding-weight <w>',
      'hybrid: weight of the embedding cosine against keyword Jaccard (default 0.8)',
      parseFloat,
    )
    .option(
      '--window <n>',
      "hybrid: compare with the mean of the episode's last N prompts (default 2; 0 = whole episode)",
      (v) => Number.parseInt(v, 10),
    )
    .action(
      async (options: {
        mode?: SegmentationMode;
        threshold?: number;
        minKeywords?: number;
        embeddingWeight?: number;
        window?: number;
      }) => {
        const overrides: Partial<SegmenterSettings> = {};
        if (options.threshold !== undefined) {
          overrides.boundaryThreshold = options.threshold;
          overrides.hybridThreshold = options.threshold;
        }
        if (options.minKeywords !== undefined) {
          overrides.minIntentKeywords = options.minKeywords;
          overrides.hybridMinIntentKeywords = options.minKeywords;
        }
        if (options.embeddingWeight !== undefined) {
          overrides.hybridEmbeddingWeight = options.embeddingWeight;
        }
        if (options.window !== undefined) overrides.hybridWindow = options.window;
        const { mode, embed } = await resolveSegmentMode(options.mode, embedderFor, process.stderr);
        const summary = await runSegment({
          mode,
          overrides,
          input: process.stdin,
          output: process.stdout,
          errors: process.stderr,
          embed,
        });
        if (summary.rejected > 0) {
          process.stderr.write(
            `${summary.rejected} line(s) rejected; ${summary.prompts} prompt(s) segmented\n`,
          );
          process.exitCode = 3;
        }
      },
    );
}
