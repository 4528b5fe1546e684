import type { Embedder } from '@engram/ai';
import { createEmbedder } from '@engram/ai';
import { loadConfig } from '@engram/config';
import { errorMessage } from '@engram/core';
import {
  RETRIEVAL_STORE_TIERS,
  RetrievalReembedder,
  SqliteRetrievalStore,
  type DocumentToEmbed,
  type EmbeddingModelId,
  type RetrievalStoreTier,
} from '@engram/embedded';
import {
  createElasticsearchClient,
  ElasticsearchReembedder,
  retrievalIndexNames,
} from '@engram/elasticsearch';
import { InvalidArgumentError, type Command } from 'commander';
import { progressBar, type Progress } from '../progress';
import { DEFAULT_DATA_DIR } from './replay.command';

// `engram reindex` (SPEC §12): every document of the three tiers gets a vector of the configured
// embedding model, stored with the model id and dimension. Documents already of that model are
// not selected, so a second run does nothing and an interrupted run resumes; a document replaced
// while it was being embedded keeps the replacing write (its writer embedded it).

/** Where documents to re-embed come from and go to: the SQLite store or Elasticsearch. */
export interface ReembedTarget<D extends { text: string }> {
  remaining(tier: RetrievalStoreTier, target: EmbeddingModelId): Promise<number>;
  /** Pages of documents still to embed; `text` is what the vector is computed from. */
  pages(
    tier: RetrievalStoreTier,
    target: EmbeddingModelId,
    size: number,
  ): AsyncIterable<D[]> | Iterable<D[]>;
  /** Writes a page's vectors (same order); returns how many were written. */
  write(
    tier: RetrievalStoreTier,
    target: EmbeddingModelId,
    page: D[],
    vectors: Float32Array[],
  ): Promise<number>;
}

export interface TierReindex {
  tier: RetrievalStoreTier;
  /** Documents without a vector of the model when the run started. */
  selected: number;
  embedded: number;
  /** Replaced by another writer while they were embedded (that write stands). */
  skipped: number;
}

export interface ReindexSummary {
  mode: 'embedded' | 'distributed';
  model: string;
  dims: number;
  tiers: TierReindex[];
  seconds: number;
  documentsPerSecond: number;
  /** Embedded: the kNN graphs (scopes of at least 5,000 vectors) built or brought up to date. */
  knnGraphs?: number;
}

/** Re-embeds the tiers' documents that are not of the embedder's model, page by page. */
export async function reembed<D extends { text: string }>(
  target: ReembedTarget<D>,
  embedder: Embedder,
  options: { tiers: readonly RetrievalStoreTier[]; batch: number; progress: Progress },
): Promise<Omit<ReindexSummary, 'mode'>> {
  if (embedder.dims === 0) {
    throw new Error('no embedding model: install it with `npm run models:setup`, then reindex');
  }
  const model: EmbeddingModelId = { model: embedder.id, dims: embedder.dims };
  const started = performance.now();
  const selected = await Promise.all(options.tiers.map((tier) => target.remaining(tier, model)));
  options.progress.total(selected.reduce((a, b) => a + b, 0));
  const tiers: TierReindex[] = [];
  for (const [i, tier] of options.tiers.entries()) {
    let embedded = 0;
    let seen = 0;
    for await (const page of target.pages(tier, model, options.batch)) {
      const vectors = await embedder.embed(page.map((doc) => doc.text));
      embedded += await target.write(tier, model, page, vectors);
      seen += page.length;
      options.progress.advance(page.length);
    }
    tiers.push({ tier, selected: selected[i], embedded, skipped: seen - embedded });
  }
  options.progress.stop();
  const seconds = (performance.now() - started) / 1000;
  const total = tiers.reduce((sum, t) => sum + t.embedded, 0);
  return {
    model: model.model,
    dims: model.dims,
    tiers,
    seconds: Number(seconds.toFixed(2)),
    documentsPerSecond: seconds > 0 ? Math.round(total / seconds) : 0,
  };
}

/** The SQLite store of a data directory as a re-embedding target. */
export function embeddedReembedTarget(
  reembedder: RetrievalReembedder,
): ReembedTarget<DocumentToEmbed> {
  return {
    remaining: (tier, model) => Promise.resolve(reembedder.remaining(tier, model)),
    *pages(tier, model, size) {
      // By row id: a document whose write was skipped is not selected again in this run.
      for (let after = 0; ;) {
        const page = reembedder.next(tier, model, after, size);
        if (page.length === 0) return;
        after = page[page.length - 1].rid;
        yield page;
      }
    },
    write: (_tier, model, page, vectors) =>
      Promise.resolve(
        reembedder.write(
          model,
          page.map((document, i) => ({ document, vector: vectors[i] })),
        ),
      ),
  };
}

interface ReindexOptions {
  dataDir: string;
  distributed?: boolean;
  tier: RetrievalStoreTier | 'all';
  batch: number;
  json?: boolean;
}

function tierOption(value: string): RetrievalStoreTier | 'all' {
  const tiers: string[] = [...RETRIEVAL_STORE_TIERS, 'all'];
  if (!tiers.includes(value)) throw new InvalidArgumentError(`must be one of ${tiers.join(', ')}`);
  return value as RetrievalStoreTier | 'all';
}

function batchOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1_000) {
    throw new InvalidArgumentError('must be a whole number from 1 to 1000');
  }
  return n;
}

async function reindexEmbedded(options: ReindexOptions, embedder: Embedder) {
  // Opened first: brings an older retrieval.db to the current schema (the vector change log).
  const store = SqliteRetrievalStore.open({ dataDir: options.dataDir });
  const reembedder = new RetrievalReembedder(store.path);
  try {
    const summary = await reembed(embeddedReembedTarget(reembedder), embedder, runOptions(options));
    const model = { model: embedder.id, dims: embedder.dims };
    return { ...summary, knnGraphs: warmKnn(store, reembedder.scopes(model), model) };
  } finally {
    reembedder.close();
    store.close();
  }
}

/** Builds the kNN graphs of the model's large scopes now, so no first recall waits for one. */
export function warmKnn(
  store: SqliteRetrievalStore,
  scopes: { tier: RetrievalStoreTier; tenantId: string; projectId: string }[],
  model: EmbeddingModelId,
): number {
  let graphs = 0;
  for (const { tier, ...scope } of scopes) {
    if (store.warmVectors(tier, scope, model.model, model.dims) === 'ann') graphs += 1;
  }
  return graphs;
}

async function reindexDistributed(options: ReindexOptions, embedder: Embedder) {
  const config = loadConfig();
  const client = createElasticsearchClient(config.elasticsearch.url);
  const target = new ElasticsearchReembedder(client, retrievalIndexNames(config.topicPrefix));
  try {
    return await reembed(target, embedder, runOptions(options));
  } finally {
    await client.close();
  }
}

function runOptions(options: ReindexOptions) {
  return {
    tiers: options.tier === 'all' ? RETRIEVAL_STORE_TIERS : [options.tier],
    batch: options.batch,
    progress: progressBar('reindex', { unit: 'documents', enabled: !options.json }),
  };
}

export function formatReindex(summary: ReindexSummary): string {
  const tiers = summary.tiers
    .map(
      (t) =>
        `${t.tier} ${t.embedded}/${t.selected}${t.skipped ? ` (${t.skipped} replaced meanwhile)` : ''}`,
    )
    .join(', ');
  return (
    `reindex (${summary.mode}) with ${summary.model} (${summary.dims} dims): ${tiers}; ` +
    `${summary.seconds} s, ${summary.documentsPerSecond} documents/s` +
    (summary.knnGraphs === undefined ? '' : `; ${summary.knnGraphs} kNN graph(s) ready`)
  );
}

export function registerReindexCommand(program: Command): void {
  program
    .command('reindex')
    .description(
      're-embed every document not yet embedded with the configured model (idempotent, resumable)',
    )
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'the configured Elasticsearch indices instead')
    .option('--tier <tier>', 'memories | episodes | turns | all', tierOption, 'all')
    .option('--batch <n>', 'documents per embedding batch', batchOption, 64)
    .option('--json', 'print the summary as one JSON line')
    .action(async (options: ReindexOptions) => {
      let embedder: Embedder;
      try {
        embedder = await createEmbedder();
      } catch (error) {
        console.error(`engram reindex: no embedding model: ${errorMessage(error)}`);
        process.exitCode = 2;
        return;
      }
      const mode = options.distributed ? 'distributed' : 'embedded';
      const result = options.distributed
        ? await reindexDistributed(options, embedder)
        : await reindexEmbedded(options, embedder);
      const summary: ReindexSummary = { mode, ...result };
      console.log(options.json ? JSON.stringify(summary) : formatReindex(summary));
    });
}
