import type { Client } from '@elastic/elasticsearch';
import { createEmbedder } from '@engram/ai';
import { loadConfig } from '@engram/config';
import {
  DownstreamUnavailableError,
  errorMessage,
  InvalidRecallRequestError,
  parseRecallRequest,
  type Provenance,
  type RecallQuery,
  type RecallRequestInput,
} from '@engram/core';
import {
  createElasticsearchClient,
  retrievalIndexNames,
  tenantsWithProject,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import { InvalidArgumentError, type Command } from 'commander';
import { SqliteRetrievalStore } from '@engram/embedded';
import { readFile } from 'node:fs/promises';
import {
  hydeClientOf,
  createRecallStack,
  type RecallStack,
  createEmbeddedRecallStack,
  embeddedEmbedder,
  episodeItem,
  memoryItem,
  scoreMessage,
  turnItem,
} from '@engram/app-retrieval';
import type { RecallAnswer, RecallHit, RecallService } from '@engram/app-retrieval';
import { DEFAULT_DATA_DIR } from './replay.command';

/** One recall as the command line or a `--queries` line states it (SPEC §12). */
export interface RecallCliQuery {
  id?: unknown;
  query?: unknown;
  phase?: unknown;
  k?: unknown;
  project?: unknown;
  tenant?: unknown;
  tier?: unknown;
}

/** Defaults from the command line, for what a `--queries` line leaves out. */
export interface RecallDefaults {
  project?: string;
  tenant?: string;
  phase?: string;
  k?: number;
  tier?: string;
  /** False: the returned memories are not counted as accessed (`--no-track`). */
  track?: boolean;
}

export interface RecallDeps {
  service: RecallService;
  /** The tenants that have data for a project (for a recall without --tenant). */
  tenantsOf(project: string): Promise<string[]>;
}

/** A recall that cannot be answered as written; the message starts with the field to fix. */
export class RecallLineError extends Error {}

/** One JSON line of `engram recall --json` / `--queries` output. */
export interface RecallJsonLine {
  id: unknown;
  query: string;
  tenant: string | null;
  project: string;
  phase: string;
  k: number;
  tier: string;
  embeddingModel: string;
  tookMs: number;
  results: RecallJsonResult[];
}

export interface RecallJsonResult {
  rank: number;
  tier: string;
  id: string;
  /** The memory type; `episode` / `turn` for the other tiers. */
  type: string;
  text: string;
  score: number;
  scores: ReturnType<typeof scoreMessage>;
  explanation: string;
  provenance: Provenance;
  memory?: ReturnType<typeof memoryItem>;
  episode?: ReturnType<typeof episodeItem>;
  turn?: ReturnType<typeof turnItem>;
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RecallLineError(`${field}: must be a string`);
  return value;
}

function optionalK(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RecallLineError(
      `k: must be a whole number of at least 1, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** The tenant to read: the given one, else the only tenant with data for the project. */
async function tenantFor(deps: RecallDeps, project: string, tenant: string | undefined) {
  if (tenant !== undefined) return tenant;
  const tenants = await deps.tenantsOf(project);
  if (tenants.length > 1) {
    throw new RecallLineError(
      `project ${project} exists for several tenants (${tenants.join(', ')}): pass --tenant`,
    );
  }
  return tenants[0] ?? null;
}

/**
 * Answers one recall. A project nobody has written to answers with no results (it is not an
 * error to ask); a request the core refuses throws RecallLineError naming the field.
 */
export async function answerRecall(
  deps: RecallDeps,
  input: RecallCliQuery,
  defaults: RecallDefaults,
): Promise<RecallJsonLine> {
  const query = optionalString(input.query, 'query') ?? '';
  const project = optionalString(input.project, 'project') ?? defaults.project;
  if (project === undefined || project.trim() === '') {
    throw new RecallLineError('project: is required (pass --project or give it on the line)');
  }
  const phase = optionalString(input.phase, 'phase') ?? defaults.phase;
  const k = optionalK(input.k) ?? defaults.k;
  const tier = optionalString(input.tier, 'tier') ?? defaults.tier;
  const tenant = await tenantFor(
    deps,
    project,
    optionalString(input.tenant, 'tenant') ?? defaults.tenant,
  );
  const request = {
    tenantId: tenant ?? '',
    projectId: project,
    query,
    phase,
    k,
    tier,
    track: defaults.track ?? true,
  };
  try {
    const answer =
      tenant === null ? emptyAnswer(deps.service, request) : await deps.service.recall(request);
    return recallJsonLine(input.id ?? null, answer, tenant);
  } catch (error) {
    if (error instanceof InvalidRecallRequestError) {
      throw new RecallLineError(error.message, { cause: error });
    }
    throw error;
  }
}

/** No tenant has data for the project: nothing to search, but the request is still checked. */
function emptyAnswer(service: RecallService, request: RecallRequestInput): RecallAnswer {
  return {
    query: parseRecallRequest({ ...request, tenantId: 'none' }),
    results: [],
    embeddingModel: service.embeddingModel,
    hyde: null,
    timings: { embedMs: 0, hydeMs: 0, searchMs: 0, rankMs: 0, totalMs: 0 },
  };
}

export function recallJsonLine(
  id: unknown,
  answer: RecallAnswer,
  tenant: string | null,
): RecallJsonLine {
  const { query }: { query: RecallQuery } = answer;
  return {
    id,
    query: query.query,
    tenant,
    project: query.scope.projectId,
    phase: query.phase,
    k: query.k,
    tier: query.tiers.length === 1 ? query.tiers[0] : 'all',
    embeddingModel: answer.embeddingModel,
    tookMs: Math.round(answer.timings.totalMs * 10) / 10,
    results: answer.results.map((hit, index) => recallJsonResult(hit, index + 1)),
  };
}

function recallJsonResult(hit: RecallHit, rank: number): RecallJsonResult {
  const common = {
    rank,
    tier: hit.tier,
    id: hit.id,
    text: hit.text,
    score: hit.score.finalScore,
    scores: scoreMessage(hit.score),
    explanation: hit.explanation,
    provenance: hit.provenance,
  };
  switch (hit.tier) {
    case 'memories':
      return { ...common, type: hit.memory.memory.memoryType, memory: memoryItem(hit.memory) };
    case 'episodes':
      return { ...common, type: 'episode', episode: episodeItem(hit.episode) };
    case 'turns':
      return { ...common, type: 'turn', turn: turnItem(hit.turn, hit.provenance) };
  }
}

export interface BatchSummary {
  answered: number;
  failed: number;
}

/**
 * `--queries FILE.jsonl`: one JSON line out per query line, in input order. A bad line (not
 * JSON, not an object, a field the core refuses) is reported on `errors` with its line number and
 * answered with `{id, line, error, results: []}` so output lines stay aligned with input lines;
 * the other lines are answered. Blank lines are not queries. An outage stops the batch.
 */
export async function runRecallBatch(
  deps: RecallDeps,
  content: string,
  defaults: RecallDefaults,
  out: NodeJS.WritableStream,
  errors: NodeJS.WritableStream,
): Promise<BatchSummary> {
  const summary: BatchSummary = { answered: 0, failed: 0 };
  const lines = content.split(/\r?\n/);
  for (const [index, text] of lines.entries()) {
    if (text.trim() === '') continue;
    const line = index + 1;
    let parsed: RecallCliQuery | undefined;
    try {
      parsed = parseQueryLine(text);
      out.write(`${JSON.stringify(await answerRecall(deps, parsed, defaults))}\n`);
      summary.answered += 1;
    } catch (error) {
      if (!(error instanceof RecallLineError)) throw error;
      const message = `line ${line}: ${error.message}`;
      errors.write(`${message}\n`);
      out.write(
        `${JSON.stringify({ id: parsed?.id ?? null, line, error: message, results: [] })}\n`,
      );
      summary.failed += 1;
    }
  }
  return summary;
}

function parseQueryLine(text: string): RecallCliQuery {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecallLineError(`not JSON (${errorMessage(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RecallLineError('must be a JSON object {id, query, phase?, k?, project?}');
  }
  return value;
}

/** The answer for people: rank, tier/type, score, text, and where it came from. */
export function formatRecall(line: RecallJsonLine): string {
  if (line.results.length === 0) {
    return line.tenant === null
      ? `no data for project ${line.project} yet`
      : `nothing recalled for "${line.query}" in ${line.project}`;
  }
  const rows = line.results.flatMap((result) => {
    const p = result.provenance;
    const source = [
      p.sessionIds.length ? `sessions ${p.sessionIds.join(',')}` : '',
      p.episodeIds.length ? `episodes ${p.episodeIds.join(',')}` : '',
      p.promptIds.length ? `prompts ${p.promptIds.slice(0, 10).join(',')}` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    return [
      `${String(result.rank).padStart(2)}. ${result.score.toFixed(4)}  [${result.tier}/${result.type}] ${oneLine(result.text)}`,
      `    from ${source || 'unknown'}`,
    ];
  });
  return [`recall "${line.query}" in ${line.project} (phase ${line.phase}):`, ...rows].join('\n');
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new InvalidArgumentError('must be a whole number of at least 1');
  }
  return parsed;
}

const TIERS = ['turns', 'episodes', 'memories', 'all'];

function tierOption(value: string): string {
  if (!TIERS.includes(value)) throw new InvalidArgumentError(`must be one of ${TIERS.join(', ')}`);
  return value;
}

interface RecallOptions extends RecallDefaults {
  query?: string;
  queries?: string;
  json?: boolean;
  dataDir: string;
  distributed?: boolean;
}

/** Recall on the configured Elasticsearch (distributed mode), through RecallService. */
export function elasticsearchRecallDeps(
  client: Client,
  indices: ElasticsearchIndexNames,
  service: RecallService,
): RecallDeps {
  return {
    service,
    tenantsOf: (project) => tenantsWithProject(client, Object.values(indices), project),
  };
}

/** Recall on the embedded store in a data directory (what `engram start` indexes into). */
export function embeddedRecallDeps(store: SqliteRetrievalStore, stack: RecallStack): RecallDeps {
  return { service: stack.service, tenantsOf: (project) => store.tenantsWithProject(project) };
}

/**
 * Embedded (default): the SQLite retrieval store in `--data-dir`, no server. Without the local
 * model the recall is lexical only, said on stderr (stdout stays the answer, `--json` parseable).
 */
async function recallEmbedded(options: RecallOptions): Promise<void> {
  const store = SqliteRetrievalStore.open({ dataDir: options.dataDir });
  const embedder = await embeddedEmbedder({ warn: (message) => console.error(message) });
  const stack = createEmbeddedRecallStack({
    ranking: loadConfig().ranking,
    store,
    embedder,
    hyde: hydeClientOf(loadConfig().llm),
  });
  try {
    await runRecallCommand(options, embeddedRecallDeps(store, stack));
  } finally {
    // Written before exit: a recall from the command line counts as an access too.
    await stack.access.close().catch(() => undefined);
    store.close();
  }
}

async function recallDistributed(options: RecallOptions): Promise<void> {
  const config = loadConfig();
  const client = createElasticsearchClient(config.elasticsearch.url);
  const indices = retrievalIndexNames(config.topicPrefix);
  const stack = createRecallStack({
    ranking: loadConfig().ranking,
    client,
    indices,
    embedder: await createEmbedder(),
    hyde: hydeClientOf(config.llm),
  });
  try {
    await runRecallCommand(options, elasticsearchRecallDeps(client, indices, stack.service));
  } catch (error) {
    if (error instanceof DownstreamUnavailableError) {
      throw new Error(
        `cannot reach Elasticsearch at ${config.elasticsearch.url} (ENGRAM_ES_URL): ${error.message}`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await stack.access.close().catch(() => undefined);
    await client.close();
  }
}

async function runRecallCommand(options: RecallOptions, deps: RecallDeps): Promise<void> {
  const defaults: RecallDefaults = {
    project: options.project,
    tenant: options.tenant,
    phase: options.phase,
    k: options.k,
    tier: options.tier,
    track: options.track,
  };
  if (options.queries !== undefined) {
    const content = await readFile(options.queries, 'utf8');
    const summary = await runRecallBatch(deps, content, defaults, process.stdout, process.stderr);
    if (summary.failed > 0) {
      console.error(
        `${summary.failed} line(s) could not be answered, ${summary.answered} answered`,
      );
      process.exitCode = 3;
    }
    return;
  }
  // A refused request (RecallLineError) ends the command with its message and exit code 1.
  const line = await answerRecall(deps, { query: options.query }, defaults);
  console.log(options.json ? JSON.stringify(line) : formatRecall(line));
}

export function registerRecallCommand(program: Command): void {
  program
    .command('recall')
    .description('hybrid recall (BM25 + kNN, phase-weighted) over turns, episodes and memories')
    .option('--query <text>', 'what to recall')
    .option(
      '--queries <file>',
      'JSON lines {id, query, phase?, k?, project?}: one JSON line out per query',
    )
    .option(
      '--phase <phase>',
      'universal phase (define, implement, validate, refine, explore, reflect)',
    )
    .option('--k <n>', 'how many results (default 10)', positiveInteger)
    .option('--project <id>', 'the project (repository) id')
    .option('--tenant <id>', 'the tenant (default: the only tenant with this project)')
    .option('--tier <tier>', 'turns | episodes | memories | all (default all)', tierOption)
    .option('--json', 'print one JSON object')
    .option(
      '--no-track',
      'do not count the returned memories as accessed (evaluations, dashboards: deterministic)',
    )
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'recall from the configured Elasticsearch instead')
    .action(async (options: RecallOptions) => {
      if ((options.query === undefined) === (options.queries === undefined)) {
        throw new Error('pass exactly one of --query TEXT or --queries FILE.jsonl');
      }
      await (options.distributed ? recallDistributed(options) : recallEmbedded(options));
    });
}
