import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { OnnxMiniLmEmbedder, type Embedder } from '@engram/ai';
import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import {
  anyOfFilter,
  memoryFilters,
  modelVector,
  observerSettings,
  tenantTokens,
  type RecallRequestInput,
} from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import {
  BulkWriter,
  createElasticsearchClient,
  ensureRetrievalIndices,
  retrievalIndexNames,
  type BulkOperation,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import {
  episodeDocument,
  memoryDocument,
  turnDocument,
  withEmbedding,
  type MemoryDocument,
  type SearchFields,
} from '@engram/core';
import { resetConfigForTests } from '@engram/config';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { runRecallBatch } from '../../apps/engram/src/commands/recall-answer';
import {
  elasticsearchRecallDeps,
  registerRecallCommand,
} from '../../apps/engram/src/commands/recall.command';
import type { RecallJsonLine } from '../../apps/engram/src/commands/recall-output';
import {
  openElasticsearchRecall,
  type ElasticsearchRecall,
} from '../../apps/retrieval/src/elasticsearch-retrieval';
import {
  startRecallServer,
  type RecallServerRuntime,
} from '../../apps/retrieval/src/recall-server';
import type { RecallStack } from '../../apps/retrieval/src/recall-stack';
import { createRecallStack } from '../../apps/retrieval/src/retrieval-backend';
import { elasticsearchBackend } from '../../apps/retrieval/src/elasticsearch-retrieval';
import { recallGrpcClient } from '../../apps/retrieval/src/recall-grpc-client';
import type { RecallHit } from '../../apps/retrieval/src/recall.service';
import { freePort } from '../support/free-port';
import {
  episodeRecord,
  memoryRecord,
  promptRecord,
  PROJECT,
  TENANT,
} from '../../apps/retrieval/src/testing/records';
import {
  CONTRACT_FILES,
  contractGraphBatches,
} from '../../libs/core/src/ports/testing/observer-graph.contract';
import { uniqueName } from './support/unique';

// Recall on real Elasticsearch with the real MiniLM model: a small corpus of memories, episodes
// and user turns of one project (plus a second tenant with the same project id), written by the
// bulk writer exactly as the indexer writes them (same document builders, same vectors).

const DAY = 86_400_000;
const NOW = Date.now();
const OTHER_TENANT = 'globex';

const MEMORIES: Memory[] = [
  memoryRecord({
    memoryId: 'm-refresh-gotcha',
    memoryType: 'gotcha',
    content: 'Auth token refresh races with logout unless it holds the session mutex',
    relatedFiles: ['src/auth/refresh.ts'],
    provenanceSessionIds: ['s-2'],
    sessionId: 's-1',
    episodeId: 'e-auth',
    sourceEventIds: ['p-1', 'p-2'],
  }),
  memoryRecord({
    memoryId: 'm-refresh-decision',
    memoryType: 'decision',
    content: 'We decided auth token refresh happens in the session service, not in the client',
    relatedFiles: ['src/auth/session-service.ts'],
    sessionId: 's-2',
    episodeId: 'e-design',
  }),
  memoryRecord({
    memoryId: 'm-ossl',
    memoryType: 'error_pattern',
    content:
      'ERR_OSSL_EVP_UNSUPPORTED from webpack 4 on Node 18: set NODE_OPTIONS=--openssl-legacy-provider',
    relatedFiles: ['webpack.config.js'],
  }),
  memoryRecord({
    memoryId: 'm-pool',
    memoryType: 'gotcha',
    content: 'Postgres connection pool exhausted under load; raise max connections in pgbouncer',
    relatedFiles: ['src/db/pool.ts'],
  }),
  memoryRecord({
    memoryId: 'm-kafka',
    memoryType: 'pattern',
    content: 'Kafka consumer groups rebalance when a member leaves; commit offsets before shutdown',
    relatedFiles: ['src/stream/consumer.ts'],
  }),
  memoryRecord({
    memoryId: 'm-css',
    memoryType: 'e2e_observation',
    content: 'The checkout page grid layout collapses on narrow mobile screens',
    relatedFiles: ['web/checkout.css'],
  }),
  memoryRecord({
    memoryId: 'm-neo4j',
    memoryType: 'decision',
    content: 'Graph writes use MERGE on natural keys so a replay changes nothing',
    relatedFiles: ['src/graph/writer.ts'],
  }),
  memoryRecord({
    memoryId: 'm-stale',
    memoryType: 'gotcha',
    content: 'The legacy billing cron must run after the invoice export finishes',
    relatedFiles: ['src/billing/cron.ts'],
    staleAt: NOW - DAY,
  }),
  memoryRecord({
    memoryId: 'm-globex-refresh',
    tenantId: OTHER_TENANT,
    memoryType: 'gotcha',
    content: 'Auth token refresh races with logout unless it holds the session mutex',
  }),
].map((memory) => ({ ...memory, lastAccessedAt: NOW - 2 * DAY, accessCount: 1 }));

const EPISODES: Episode[] = [
  episodeRecord({
    episodeId: 'e-auth',
    sessionId: 's-1',
    intent: 'fix the race between logout and the auth token refresh',
    intentKeywords: ['auth', 'token', 'refresh', 'logout'],
    summary: 'Serialised token refresh behind a mutex; logout now waits for it.',
    keyDecisions: ['refresh runs behind the session mutex'],
    firstPromptId: 1,
    lastPromptId: 3,
    startedAt: NOW - 3 * DAY,
    endedAt: NOW - 3 * DAY + 3_600_000,
    sourceEventIds: ['p-1', 'p-2', 'p-3'],
  }),
  episodeRecord({
    episodeId: 'e-css',
    sessionId: 's-3',
    intent: 'make the checkout grid work on phones',
    intentKeywords: ['checkout', 'grid', 'mobile'],
    hotFiles: [{ path: 'web/checkout.css', touches: 5 }],
    summary: 'Switched the checkout grid to a single column below 480px.',
    firstPromptId: 1,
    lastPromptId: 2,
    startedAt: NOW - DAY,
    endedAt: NOW - DAY + 1_800_000,
    sourceEventIds: ['p-css'],
  }),
];

const PROMPTS: PromptSubmitted[] = [
  promptRecord({
    eventId: 'p-1',
    sessionId: 's-1',
    promptId: 1,
    text: 'users get logged out randomly when their token refreshes',
    timestamp: NOW - 3 * DAY,
  }),
  promptRecord({
    eventId: 'p-2',
    sessionId: 's-1',
    promptId: 2,
    text: 'put the refresh behind the session lock',
    timestamp: NOW - 3 * DAY + 60_000,
  }),
  promptRecord({
    eventId: 'p-css',
    sessionId: 's-3',
    promptId: 1,
    text: 'the checkout grid breaks on my phone',
    timestamp: NOW - DAY,
  }),
  promptRecord({
    eventId: 'p-deploy',
    sessionId: 's-4',
    promptId: 1,
    text: 'ship the hotfix to staging before lunch',
    timestamp: NOW - 10 * DAY,
  }),
  promptRecord({
    eventId: 'p-agent',
    sessionId: 's-4',
    promptId: 2,
    source: 'agent',
    text: 'running the auth token refresh tests now',
    timestamp: NOW - 10 * DAY,
  }),
];

/** Embedded by another model: only BM25 may find it (a query never compares two models). */
const FOREIGN_MODEL_TURN = promptRecord({
  eventId: 'p-foreign-model',
  sessionId: 's-5',
  promptId: 1,
  text: 'zanzibar quarterly roadmap sync',
  timestamp: NOW - DAY,
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

type Unary = (
  request: object,
  metadata: Metadata,
  callback: (error: ServiceError | null, response?: RecallResponse) => void,
) => void;

interface RecallResponse {
  results: {
    tier: string;
    item: string;
    memory?: { memory_id: string; type: string };
    turn?: { event_id: string };
    text: string;
    scores: { final_score: number; bm25_rank: number; knn_rank: number; phase_weight: number };
    provenance: {
      tenant_id: string;
      session_ids: string[];
      episode_ids: string[];
      event_ids: string[];
      memory_id: string;
    };
  }[];
  embedding_model: string;
}

describe('recall on real Elasticsearch (BM25 + kNN, fused and phase-weighted)', () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const prefix = `${uniqueName('it-recall')}.`;
  const indices: ElasticsearchIndexNames = retrievalIndexNames(prefix);
  let embedder: Embedder;
  let stack: RecallStack;
  let server: RecallServerRuntime;
  let serverBackend: ElasticsearchRecall;
  let recallClient: Record<string, Unary> & { close(): void };
  let graphDir: string;
  let graph: SqliteObserverGraph;

  const recall = (input: Partial<RecallRequestInput>) =>
    stack.service.recall({ tenantId: TENANT, projectId: PROJECT, ...input });
  const ids = (results: RecallHit[]) => results.map((hit) => hit.id);
  /** The other members of a result's group ("tier id"), as its explanation names them. */
  const groupedWith = (hit: RecallHit) =>
    /; one source with (.+)$/.exec(hit.explanation)?.[1].split(', ') ?? [];

  async function vectorsFor<D extends SearchFields>(
    docs: { id: string; body: D }[],
    index: string,
    model = embedder.id,
  ): Promise<BulkOperation[]> {
    const vectors = await embedder.embed(docs.map((doc) => doc.body.text));
    return docs.map((doc, i) => ({
      action: 'index',
      index,
      id: doc.id,
      document: withEmbedding(doc.body, modelVector(model, Array.from(vectors[i]))),
    }));
  }

  beforeAll(async () => {
    embedder = await OnnxMiniLmEmbedder.load();
    await ensureRetrievalIndices(es, indices, { dims: embedder.dims });
    const turns = PROMPTS.flatMap((prompt) => turnDocument(prompt) ?? []);
    const operations = [
      ...(await vectorsFor(MEMORIES.map(memoryDocument), indices.memories)),
      ...(await vectorsFor(EPISODES.map(episodeDocument), indices.episodes)),
      ...(await vectorsFor(turns, indices.turns)),
      ...(await vectorsFor([turnDocument(FOREIGN_MODEL_TURN)!], indices.turns, 'other-model@1')),
    ];
    await BulkWriter.forClient(es).write(operations);
    await es.indices.refresh({ index: Object.values(indices) });
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: elasticsearchBackend(es, indices),
      embedder,
    });
    // GetFileNeighbors reads the observer graph through its port: here the embedded adapter
    // (the Neo4j one passes the same contract suite), seeded with the contract's sessions.
    graphDir = await mkdtemp(join(tmpdir(), 'engram-recall-graph-'));
    graph = SqliteObserverGraph.open({ dataDir: graphDir, rule: observerSettings() });
    for (const batch of contractGraphBatches({ tenantId: TENANT, projectId: PROJECT }, 'g')) {
      await graph.write(batch);
    }
    const port = await freePort();
    // The server's own client and access-counter mirror, as the distributed service opens them.
    serverBackend = openElasticsearchRecall({
      elasticsearchUrl: infra.elasticsearchUrl,
      indexPrefix: prefix,
      warn: () => undefined,
    });
    server = await startRecallServer({
      ranking: DEFAULT_RANKING_CONFIG,
      neighbours: graph,
      backend: serverBackend.backend,
      embedder,
      url: `127.0.0.1:${port}`,
      tokens: tenantTokens({
        'token-acme': { tenants: [TENANT], role: 'admin' },
        'token-globex': { tenants: [OTHER_TENANT], role: 'admin' },
      }),
      logger: false,
    });
    // The client the product ships (proto field names as any gRPC client sees them).
    recallClient = recallGrpcClient<typeof recallClient>(`127.0.0.1:${port}`);
  });

  afterAll(async () => {
    recallClient?.close();
    await server?.stop();
    await serverBackend?.close();
    graph?.close();
    await rm(graphDir, { recursive: true, force: true });
    await stack?.access.close();
    for (const index of Object.values(indices)) {
      await es.indices.delete({ index, ignore_unavailable: true });
      await es.indices.deleteIndexTemplate({ name: index }).catch(() => undefined);
    }
    await es.close();
  });

  it('should find an exact identifier lexically (BM25 rank 1) and carry its provenance', async () => {
    const answer = await recall({
      query: 'ERR_OSSL_EVP_UNSUPPORTED',
      tier: 'memories',
      phase: 'validate',
      k: 3,
    });
    const [top] = answer.results;
    expect(top.id).toBe('m-ossl');
    expect(top.score.bm25Rank).toBe(1);
    expect(top.score.bm25).toBeGreaterThan(0);
    expect(top.provenance).toMatchObject({
      tenantId: TENANT,
      projectId: PROJECT,
      memoryId: 'm-ossl',
      sessionIds: ['session-1', 'session-2'],
      eventIds: ['source-m-ossl'],
    });
    expect(answer.embeddingModel).toBe(embedder.id);
  });

  it('should find a paraphrase with no word in common through kNN alone', async () => {
    const answer = await recall({
      query: 'database runs out of sockets when traffic spikes',
      tier: 'memories',
      phase: 'implement',
      k: 3,
    });
    const [top] = answer.results;
    expect(top.id).toBe('m-pool');
    // Not matched lexically at all: found by the vector search, ranked by exact cosine.
    expect(top.score.bm25Rank).toBe(0);
    expect(top.score.knnRank).toBe(1);
    expect(top.score.cosineStatus).toBe('computed');
    expect(top.score.knn).toBeGreaterThan(answer.results[1].score.knn);
    // First on relevance, not lifted by the phase table: no query word to cover, yet the
    // semantic reading (best cosine of all candidates) keeps it above a one-word lexical match.
    expect(top.score.relevance).toBeGreaterThan(answer.results[1].score.relevance);
  });

  it('should never compare vectors of another model: such a document is found by BM25 only', async () => {
    const answer = await recall({ query: 'zanzibar roadmap', tier: 'turns', k: 5 });
    const hit = answer.results.find((result) => result.id === 'p-foreign-model');
    expect(hit).toBeDefined();
    expect(hit!.score).toMatchObject({
      bm25Rank: 1,
      knnRank: 0,
      knn: 0,
      cosineStatus: 'model_mismatch',
    });
  });

  it('should reorder by phase: gotchas first while implementing, decisions first while defining', async () => {
    const query = 'auth token refresh';
    const implement = (await recall({ query, tier: 'memories', phase: 'implement' })).results;
    const define = (await recall({ query, tier: 'memories', phase: 'define' })).results;
    const at = (results: RecallHit[], id: string) => ids(results).indexOf(id);
    const hit = (results: RecallHit[], id: string) => results[at(results, id)];
    expect(at(implement, 'm-refresh-gotcha')).toBeGreaterThanOrEqual(0);
    expect(at(implement, 'm-refresh-gotcha')).toBeLessThan(at(implement, 'm-refresh-decision'));
    expect(at(define, 'm-refresh-decision')).toBeGreaterThanOrEqual(0);
    expect(at(define, 'm-refresh-decision')).toBeLessThan(at(define, 'm-refresh-gotcha'));
    expect(hit(implement, 'm-refresh-gotcha').score.phaseWeight).toBe(1.5);
    expect(hit(implement, 'm-refresh-decision').score.phaseWeight).toBe(0.7);
    expect(hit(define, 'm-refresh-gotcha').score.phaseWeight).toBe(0.8);
    expect(hit(define, 'm-refresh-decision').score.phaseWeight).toBe(1.3);
    // Same documents, same base score: only the phase weight differs. While implementing, the
    // gotcha is first although the decision is the more relevant (closer cosine): the phase table
    // reorders such near-ties, through its damped factor (weight^0.25).
    for (const id of ['m-refresh-gotcha', 'm-refresh-decision']) {
      expect(hit(define, id).score.base).toBeCloseTo(hit(implement, id).score.base, 2);
    }
    expect(hit(implement, 'm-refresh-decision').score.relevance).toBeGreaterThan(
      hit(implement, 'm-refresh-gotcha').score.relevance,
    );
    expect(hit(implement, 'm-refresh-gotcha').score.phaseFactor).toBeCloseTo(1.5 ** 0.25, 10);
    // The table's weight, 1.50 for implement/gotcha, is what the explanation says was applied.
    expect(hit(implement, 'm-refresh-gotcha').explanation).toContain(
      `phase ${(1.5 ** 0.25).toFixed(4)} (implement/gotcha 1.50, damped)`,
    );
  });

  it("should keep tenants apart: another tenant's identical memory is never returned", async () => {
    const acme = await recall({ query: 'token refresh races with logout', tier: 'memories' });
    const globex = await recall({
      tenantId: OTHER_TENANT,
      query: 'token refresh races with logout',
      tier: 'memories',
    });
    expect(ids(acme.results)).toContain('m-refresh-gotcha');
    expect(ids(acme.results)).not.toContain('m-globex-refresh');
    expect(ids(globex.results)).toEqual(['m-globex-refresh']);
    expect(acme.results.every((r) => r.provenance.tenantId === TENANT)).toBe(true);
  });

  it('should search all tiers together, only user turns, stale memories penalised and prefixed', async () => {
    const all = await recall({ query: 'token refresh logout', k: 10 });
    // One result per source (recall-merge): the episode e-auth, its turns p-1 and p-2 and the
    // gotcha distilled from them are one result, shown by the memory (the stated lesson) and
    // ranked by its best member, the episode; the members are named in the explanation and their
    // provenance is the result's. Every tier is reached in this one recall, as results or members.
    const reached = all.results.flatMap((r) => [`${r.tier} ${r.id}`, ...groupedWith(r)]);
    expect(new Set(reached.map((member) => member.split(' ')[0]))).toEqual(
      new Set(['memories', 'episodes', 'turns']),
    );
    const [top] = all.results;
    expect(top).toMatchObject({ tier: 'memories', id: 'm-refresh-gotcha' });
    expect(top.explanation).toContain('from its best, episodes e-auth; shown:');
    expect(groupedWith(top).sort()).toEqual(['episodes e-auth', 'turns p-1', 'turns p-2']);
    expect(top.provenance).toMatchObject({
      episodeIds: ['e-auth'],
      promptIds: [1, 2, 3],
      eventIds: ['p-1', 'p-2', 'p-3'],
    });
    expect(top.provenance.sessionIds).toContain('s-1');
    // Agent prompts are not turns: never a result, a member or a group's evidence.
    expect(reached.some((member) => member.endsWith(' p-agent'))).toBe(false);
    expect(all.results.flatMap((r) => r.provenance.eventIds)).not.toContain('p-agent');
    // The episode's and a turn's own provenance, each shown alone in its tier.
    const episodes = await recall({ query: 'token refresh logout', tier: 'episodes', k: 10 });
    expect(episodes.results.find((r) => r.id === 'e-auth')!.provenance).toMatchObject({
      sessionIds: ['s-1'],
      episodeIds: ['e-auth'],
      promptIds: [1, 2, 3],
      eventIds: ['p-1', 'p-2', 'p-3'],
    });
    const turns = await recall({ query: 'token refresh logout', tier: 'turns', k: 10 });
    expect(ids(turns.results)).not.toContain('p-agent');
    expect(turns.results.find((r) => r.id === 'p-1')!.provenance).toMatchObject({
      sessionIds: ['s-1'],
      episodeIds: ['e-auth'], // from the episode lookup: a prompt is indexed before its episode
      promptIds: [1],
      eventIds: ['p-1'],
    });

    const stale = await recall({ query: 'legacy billing cron invoice export', tier: 'memories' });
    const staleHit = stale.results.find((r) => r.id === 'm-stale')!;
    expect(staleHit.text).toMatch(/^\[STALE — file no longer exists\] The legacy billing/);
    expect(staleHit.score.stalePenalty).toBe(0.5);
    expect(staleHit.tier === 'memories' && staleHit.memory.confidence).toBeCloseTo(0.4, 10);
    const excluded = await recall({
      query: 'legacy billing cron invoice export',
      tier: 'memories',
      excludeStale: true,
    });
    expect(ids(excluded.results)).not.toContain('m-stale');
  });

  it('should honour time windows and recent sessions', async () => {
    const lastTwoDays = await recall({
      query: 'checkout grid phone token refresh',
      tier: 'turns',
      temporal: { mode: 'time_window', fromMs: NOW - 2 * DAY, toMs: NOW },
    });
    expect(ids(lastTwoDays.results)).toEqual(['p-css']);
    const recent = await recall({
      query: 'checkout grid phone token refresh',
      tier: 'episodes',
      temporal: { mode: 'recent_sessions', n: 1 },
    });
    expect(ids(recent.results)).toEqual(['e-css']);
  });

  it('should count accesses in the background, apart from the memory document', async () => {
    await stack.access.flush(); // what earlier tests returned
    await es.indices.refresh({ index: indices.memoryAccess });
    /** The memory as every read of the store sees it: its document with its counters. */
    const stored = async () => {
      const [doc] = await stack.store.list<MemoryDocument>('memories', {
        scope: { tenantId: TENANT, projectId: PROJECT },
        filter: [...memoryFilters({}, undefined), anyOfFilter('memoryId', ['m-kafka'])],
        size: 1,
      });
      return doc.source;
    };
    const document = () => es.get<Memory>({ index: indices.memories, id: 'm-kafka' });
    const before = await stored();
    const documentBefore = await document();
    await recall({ query: 'kafka consumer rebalance offsets', tier: 'memories', k: 1 });
    await recall({ query: 'kafka consumer group commit offsets', tier: 'memories', k: 1 });
    // The recall returned before anything was written; the tracker holds the hits.
    expect(stack.access.pending).toBeGreaterThan(0);
    await stack.access.flush();
    await es.indices.refresh({ index: indices.memoryAccess });
    const after = await stored();
    expect(after.accessCount).toBe(before.accessCount + 2);
    expect(after.lastAccessedAt).toBeGreaterThan(before.lastAccessedAt);
    // Counting did not rewrite the memory (nor re-index its vector): same version, same counts.
    const documentAfter = await document();
    expect(documentAfter._seq_no).toBe(documentBefore._seq_no);
    expect(documentAfter._source!.accessCount).toBe(documentBefore._source!.accessCount);
    // Re-indexing the memory (a new version from the log) keeps the counts.
    await BulkWriter.forClient(es).write(
      await vectorsFor(
        [memoryDocument(MEMORIES.find((m) => m.memoryId === 'm-kafka')!)],
        indices.memories,
      ),
    );
    await es.indices.refresh({ index: indices.memories });
    expect((await stored()).accessCount).toBe(after.accessCount);
  });

  it('should answer Recall over gRPC with results and provenance, and refuse bad requests', async () => {
    const call = (method: string, request: object, token = 'token-acme') =>
      new Promise<RecallResponse>((resolve, reject) => {
        const metadata = new Metadata();
        if (token) metadata.set('authorization', `Bearer ${token}`);
        recallClient[method](request, metadata, (error, response) =>
          error ? reject(error) : resolve(response!),
        );
      });
    const response = await call('Recall', {
      scope: { project_id: PROJECT },
      query: 'auth token refresh',
      phase: 'UNIVERSAL_PHASE_IMPLEMENT',
      tier: 'TIER_MEMORIES',
      k: 5,
    });
    expect(response.embedding_model).toBe(embedder.id);
    // Only the two memories about it: unrelated neighbours are below the kNN similarity floor.
    expect(response.results.map((r) => r.memory?.memory_id)).toEqual([
      'm-refresh-gotcha',
      'm-refresh-decision',
    ]);
    const [top] = response.results;
    expect(top).toMatchObject({ tier: 'TIER_MEMORIES', item: 'memory' });
    expect(top.scores.phase_weight).toBe(1.5);
    expect(top.scores.final_score).toBeGreaterThan(0);
    expect(top.provenance).toMatchObject({
      tenant_id: TENANT,
      memory_id: 'm-refresh-gotcha',
      session_ids: ['s-1', 's-2'],
      episode_ids: ['e-auth'],
      event_ids: ['p-1', 'p-2'],
    });

    const turns = await call('Recall', {
      scope: { project_id: PROJECT },
      query: 'logged out when the token refreshes',
      tier: 'TIER_TURNS',
      k: 1,
    });
    expect(turns.results[0]).toMatchObject({
      item: 'turn',
      turn: { event_id: 'p-1', episode_id: 'e-auth' },
      provenance: { episode_ids: ['e-auth'], prompt_ids: [1], event_ids: ['p-1'] },
    });

    await expect(
      call('Recall', { scope: { tenant_id: TENANT }, query: 'x' }),
    ).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringMatching(/^scope\.project_id: /) as string,
    });
    await expect(
      call('Recall', { scope: { project_id: PROJECT }, query: 'x', memory_types: ['rumour'] }),
    ).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringMatching(/^memory_types\[0\]: /) as string,
    });
    await expect(
      call('Recall', { scope: { tenant_id: OTHER_TENANT, project_id: PROJECT }, query: 'x' }),
    ).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
    await expect(
      call('Recall', { scope: { project_id: PROJECT }, query: 'x' }, ''),
    ).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    // This server was started without an event log: the write rpcs say so.
    await expect(
      call('Feedback', {
        scope: { project_id: PROJECT },
        memory_id: 'm-ossl',
        action: 'FEEDBACK_ACTION_CONFIRM',
      }),
    ).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
      details: expect.stringContaining('Feedback needs the event log') as string,
    });
    const globex = await call(
      'Recall',
      { scope: { project_id: PROJECT }, query: 'auth token refresh', tier: 'TIER_MEMORIES' },
      'token-globex',
    );
    expect(globex.results.map((r) => r.provenance.tenant_id)).toEqual([OTHER_TENANT]);

    const neighbours = await call('GetFileNeighbors', {
      scope: { project_id: PROJECT },
      file_path: `./${CONTRACT_FILES.A}`,
    });
    expect(neighbours).toMatchObject({
      file_path: CONTRACT_FILES.A,
      neighbors: [
        { path: CONTRACT_FILES.B, raw_count: 4, directional: true, direction: 'incoming' },
        { path: CONTRACT_FILES.C, raw_count: 1 },
      ],
    });
    expect(
      (neighbours as unknown as { neighbors: { weight: number }[] }).neighbors[0].weight,
    ).toBeCloseTo(2 / 3, 12);
    await expect(
      call('GetFileNeighbors', { scope: { project_id: PROJECT }, file_path: '../etc/passwd' }),
    ).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringMatching(/^file_path: /) as string,
    });
    const foreign = await call(
      'GetFileNeighbors',
      { scope: { project_id: PROJECT }, file_path: CONTRACT_FILES.A },
      'token-globex',
    );
    expect((foreign as unknown as { neighbors: unknown[] }).neighbors).toEqual([]);
  });

  it('should answer a --queries batch with one JSON line per query, in order, bad lines named', async () => {
    const deps = elasticsearchRecallDeps(es, indices, stack.service);
    const content = [
      JSON.stringify({ id: 'q1', query: 'ERR_OSSL_EVP_UNSUPPORTED', k: 2, project: PROJECT }),
      '{not json',
      JSON.stringify({ id: 'q3', query: 'auth token refresh', phase: 'define', k: 3 }),
      '',
      JSON.stringify({ id: 'q5', k: 3 }),
      JSON.stringify({ id: 'q6', query: 'checkout grid on phones', project: 'nobody/else' }),
    ].join('\n');
    const out = new Collect();
    const errors = new Collect();
    const summary = await runRecallBatch(
      deps,
      content,
      { project: PROJECT, tenant: TENANT },
      out,
      errors,
    );
    expect(summary).toEqual({ answered: 3, failed: 2 });
    const lines = out.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as RecallJsonLine);
    expect(lines.map((line) => line.id)).toEqual(['q1', null, 'q3', 'q5', 'q6']);
    expect(lines[0].results.map((r) => r.id)).toEqual(['m-ossl']);
    expect(lines[0].results[0]).toMatchObject({
      rank: 1,
      tier: 'memories',
      type: 'error_pattern',
      provenance: { tenantId: TENANT, projectId: PROJECT, memoryId: 'm-ossl' },
    });
    expect(lines[0]).toMatchObject({ tenant: TENANT, project: PROJECT, k: 2, tier: 'all' });
    expect(lines[2]).toMatchObject({ phase: 'define', k: 3 });
    expect(lines[2].results[0].id).toBe('m-refresh-decision');
    expect(lines[2].results.every((r) => r.provenance.sessionIds.length > 0)).toBe(true);
    expect(lines[1]).toMatchObject({
      line: 2,
      error: expect.stringMatching(/^line 2: not JSON/) as string,
    });
    expect(lines[3]).toMatchObject({ line: 5, error: 'line 5: query: is required', results: [] });
    expect(lines[4]).toMatchObject({ tenant: TENANT, project: 'nobody/else', results: [] });
    expect(errors.text).toContain('line 2: not JSON');
    expect(errors.text).toContain('line 5: query: is required');
  });

  it('should run `engram recall` end to end: --queries batch and --query --json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engram-recall-'));
    const file = join(dir, 'queries.jsonl');
    await writeFile(
      file,
      [
        JSON.stringify({ id: 'a', query: 'checkout grid on phones', k: 2 }),
        JSON.stringify({ id: 'b', query: 'ERR_OSSL_EVP_UNSUPPORTED', phase: 'validate' }),
        JSON.stringify({ id: 'c' }),
      ].join('\n'),
    );
    const saved = { ...process.env };
    Object.assign(process.env, {
      ENGRAM_TOPIC_PREFIX: prefix,
      ENGRAM_ES_URL: infra.elasticsearchUrl,
    });
    resetConfigForTests();
    const printed: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => {
      printed.push(`${line}\n`);
    });
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const run = async (...args: string[]) => {
      const program = new Command().exitOverride();
      registerRecallCommand(program);
      await program.parseAsync(['node', 'engram', 'recall', '--distributed', ...args]);
    };
    try {
      await run('--queries', file, '--project', PROJECT, '--tenant', TENANT);
      expect(process.exitCode).toBe(3);
      process.exitCode = undefined;
      await run(
        '--query',
        'token refresh',
        '--project',
        PROJECT,
        '--tenant',
        TENANT,
        '--tier',
        'turns',
        '--json',
      );
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
      log.mockRestore();
      error.mockRestore();
      process.env = saved;
      resetConfigForTests();
      process.exitCode = undefined;
      await rm(dir, { recursive: true, force: true });
    }
    const lines = printed
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as RecallJsonLine & { error?: string });
    expect(lines.map((line) => line.id)).toEqual(['a', 'b', 'c', null]);
    // The two best of the three checkout documents (memory, episode, user turn), each traced.
    expect(lines[0].results).toHaveLength(2);
    for (const result of lines[0].results) {
      expect(['m-css', 'e-css', 'p-css']).toContain(result.id);
      expect(result.provenance.tenantId).toBe(TENANT);
      expect(
        result.provenance.sessionIds.length + result.provenance.eventIds.length,
      ).toBeGreaterThan(0);
    }
    expect(lines[1].results[0]).toMatchObject({ id: 'm-ossl', type: 'error_pattern' });
    expect(lines[2].error).toBe('line 3: query: is required');
    expect(lines[3]).toMatchObject({ tier: 'turns', tenant: TENANT });
    expect(lines[3].results.every((r) => r.tier === 'turns')).toBe(true);
    expect(lines[3].results[0].provenance.eventIds).toHaveLength(1);
  });

  it('should measure recall latency over the corpus (reported, not asserted)', async () => {
    const queries = [
      'auth token refresh',
      'database runs out of sockets',
      'kafka rebalance',
      'checkout grid mobile',
      'ERR_OSSL_EVP_UNSUPPORTED',
      'graph replay merge',
      'deploy the hotfix',
      'billing cron',
    ];
    for (const query of queries) await recall({ query }); // warm-up (JIT, query cache, ES caches)
    const totals: number[] = [];
    const parts = { embedMs: 0, searchMs: 0, rankMs: 0, otherMs: 0 };
    const rounds = 5;
    for (let round = 0; round < rounds; round += 1) {
      for (const query of queries) {
        // A fresh string per round: the query-embedding cache must not hide the model's cost.
        const answer = await recall({ query: `${query} ${round}` });
        totals.push(answer.timings.totalMs);
        parts.embedMs += answer.timings.embedMs;
        parts.searchMs += answer.timings.searchMs;
        parts.rankMs += answer.timings.rankMs;
        parts.otherMs +=
          answer.timings.totalMs -
          answer.timings.embedMs -
          answer.timings.searchMs -
          answer.timings.rankMs;
      }
    }
    totals.sort((a, b) => a - b);
    const n = totals.length;
    console.log(
      `[recall] ${n} recalls, all tiers, k 10, ${MEMORIES.length + EPISODES.length + PROMPTS.length + 1} documents: ` +
        `p50 ${percentile(totals, 50).toFixed(1)} ms, p95 ${percentile(totals, 95).toFixed(1)} ms; ` +
        `mean embed ${(parts.embedMs / n).toFixed(1)} ms, search ${(parts.searchMs / n).toFixed(1)} ms, ` +
        `rank ${(parts.rankMs / n).toFixed(2)} ms, turn episodes ${(parts.otherMs / n).toFixed(1)} ms`,
    );
    expect(n).toBe(queries.length * rounds);
  });
});
