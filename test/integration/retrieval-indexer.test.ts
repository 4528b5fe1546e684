import { OnnxMiniLmEmbedder, type Embedder } from '@engram/ai';
import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import { MisconfigurationError } from '@engram/core';
import {
  createElasticsearchClient,
  ensureRetrievalIndices,
  retrievalIndexDefinition,
  retrievalIndexNames,
  type RetrievalIndexNames,
} from '@engram/elasticsearch';
import { unpackVector } from '@engram/core';
import {
  contractCodec,
  deadLetterTopic,
  DLQ_HEADERS,
  ensureTopics,
  EventPublisher,
  reliableProducerConfig,
  valueSubject,
  type TopicCodec,
} from '@engram/kafka';
import { resetConfigForTests } from '@engram/config';
import type { Client } from '@elastic/elasticsearch';
import { NestFactory } from '@nestjs/core';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningRetrieval } from '../../apps/retrieval/src/retrieval.topology';
import { startTestIndexer } from './support/retrieval-indexer';
import {
  prefixedRetrievalTopics,
  type RetrievalTopics,
} from '../../apps/retrieval/src/retrieval-topics';
import { RetrievalModule } from '../../apps/retrieval/src/retrieval.module';
import { DISTRIBUTED_RETRIEVAL_PROVIDERS } from '../../apps/retrieval/src/elasticsearch-backend.module';
import {
  episodeRecord,
  memoryRecord,
  promptRecord,
} from '../../apps/retrieval/src/testing/records';
import { CuttableProxy } from './support/cuttable-proxy';
import { readCommitted, testKafka, testRegistry } from './support/kafka-fixtures';
import { eventually, uniqueName } from './support/unique';

// A made-up key of a well-known shape (never a real credential).
const SECRET = 'AKIAIOSFODNN7EXAMPLE';
const OVERSIZE_SESSION = 's'.repeat(40_000); // an "immense term" for a keyword: Elasticsearch refuses it

const MEMORIES: Memory[] = [
  memoryRecord({
    memoryId: 'm-refresh',
    content: 'Token refresh must run behind the auth mutex, or a logout races it',
    relatedFiles: ['src/auth/refresh.ts'],
    provenanceSessionIds: ['session-2', 'session-3'],
  }),
  memoryRecord({
    memoryId: 'm-kafka',
    memoryType: 'pattern',
    content: 'Kafka consumer groups rebalance when a member leaves; commit offsets before shutdown',
    relatedFiles: ['src/stream/consumer.ts'],
    relatedModules: ['stream'],
  }),
  memoryRecord({
    memoryId: 'm-neo4j',
    memoryType: 'decision',
    content: 'Graph writes use MERGE on natural keys so a replay changes nothing',
    relatedFiles: ['src/graph/writer.ts'],
  }),
  memoryRecord({
    memoryId: 'm-css',
    memoryType: 'e2e_observation',
    content: 'The checkout page grid layout collapses on narrow mobile screens',
    relatedFiles: ['web/checkout.css'],
  }),
  memoryRecord({ memoryId: 'm-deleted', content: 'A memory that is deleted again' }),
  memoryRecord({ memoryId: 'm-poison', sessionId: OVERSIZE_SESSION }),
];

const EPISODES: Episode[] = [
  episodeRecord({
    episodeId: 'e-auth',
    intent: 'fix the race between logout and the auth token refresh',
    intentKeywords: ['auth', 'token', 'refresh', 'logout'],
    summary: 'Serialised refresh behind a mutex; logout waits for it.',
    keyDecisions: ['refresh runs behind the auth mutex'],
    firstPromptId: 1,
    lastPromptId: 3,
  }),
  episodeRecord({
    episodeId: 'e-css',
    intent: 'make the checkout grid work on phones',
    intentKeywords: ['checkout', 'grid', 'mobile'],
    hotFiles: [{ path: 'web/checkout.css', touches: 5 }],
    firstPromptId: 4,
    lastPromptId: 5,
  }),
];

const PROMPTS: PromptSubmitted[] = [
  promptRecord({
    eventId: 'p-refresh',
    promptId: 1,
    text: 'the token refresh fails right after a logout',
  }),
  promptRecord({
    eventId: 'p-secret',
    promptId: 2,
    text: `deploy it with the aws key ${SECRET} please`,
  }),
  promptRecord({ eventId: 'p-css', promptId: 4, text: 'the checkout grid breaks on my phone' }),
  promptRecord({
    eventId: 'p-agent',
    promptId: 3,
    source: 'agent',
    text: 'running the auth tests now',
  }),
  promptRecord({ eventId: 'p-system', promptId: 5, source: 'system', text: 'context compacted' }),
];

const USER_PROMPTS = PROMPTS.filter((prompt) => prompt.source === 'user');
/** Every record on the three topics: memories, one tombstone, episodes, prompts. */
const RECORDS = MEMORIES.length + 1 + EPISODES.length + PROMPTS.length;

function onTopic<E>(codec: TopicCodec<E>, topic: string): TopicCodec<E> {
  return { ...codec, topic, subject: valueSubject(topic) };
}

async function ensureInputTopics(kafka: Kafka, topics: RetrievalTopics): Promise<void> {
  await ensureTopics(kafka, [
    { topic: topics.memories, partitions: 3, compacted: true },
    { topic: topics.episodes, partitions: 3, compacted: true },
    { topic: topics.prompts, partitions: 3 },
  ]);
}

async function publishMemories(kafka: Kafka, topic: string, memories: Memory[]): Promise<void> {
  const publisher = new EventPublisher(kafka, testRegistry());
  await publisher.connect();
  try {
    const codec = onTopic(contractCodec('memory.memories.v1'), topic);
    await publisher.publish(
      codec,
      memories.map((memory) => ({ type: 'Memory' as const, ...memory })),
    );
  } finally {
    await publisher.disconnect();
  }
}

async function publishAll(kafka: Kafka, topics: RetrievalTopics): Promise<void> {
  await ensureInputTopics(kafka, topics);
  await publishMemories(kafka, topics.memories, MEMORIES);
  const publisher = new EventPublisher(kafka, testRegistry());
  const raw = kafka.producer(reliableProducerConfig());
  await Promise.all([publisher.connect(), raw.connect()]);
  try {
    // A tombstone: the key, no value (same key, so the same partition, after the memory).
    await raw.send({ topic: topics.memories, messages: [{ key: 'm-deleted', value: null }] });
    await publisher.publish(
      onTopic(contractCodec('memory.episodes.v1'), topics.episodes),
      EPISODES.map((episode) => ({ type: 'Episode' as const, ...episode })),
    );
    await publisher.publish(
      onTopic(contractCodec('agent.prompts.v1'), topics.prompts),
      PROMPTS.map((prompt) => ({ type: 'PromptSubmitted' as const, ...prompt })),
    );
  } finally {
    await Promise.all([publisher.disconnect(), raw.disconnect()]);
  }
}

interface StoredDocument {
  index: string;
  id: string;
  version: number | undefined;
  source: Record<string, unknown>;
}

async function allDocuments(es: Client, indices: RetrievalIndexNames): Promise<StoredDocument[]> {
  await es.indices.refresh({ index: Object.values(indices) });
  const result = await es.search<Record<string, unknown>>({
    index: Object.values(indices),
    size: 1000,
    version: true,
    query: { match_all: {} },
    sort: [{ _index: 'asc' }, { eventId: 'asc' }],
  });
  return result.hits.hits.map((hit) => ({
    index: hit._index,
    id: hit._id!,
    version: hit._version,
    source: hit._source!,
  }));
}

async function source(es: Client, index: string, id: string): Promise<Record<string, unknown>> {
  return (await es.get<Record<string, unknown>>({ index, id }))._source!;
}

/** Waits until the indexer has settled every record (indexed, skipped, deleted or dead-lettered). */
async function settled(runtime: RunningRetrieval, records: number): Promise<void> {
  const { counters } = runtime.consumer;
  await eventually(
    () => (counters.processed + counters.deadLettered >= records ? true : undefined),
    { timeoutMs: 90_000 },
  );
}

describe('retrieval indexer on real Kafka, Schema Registry and Elasticsearch', () => {
  const infra = inject('infra');
  const kafka = testKafka();
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const prefix = `${uniqueName('it-retrieval')}.`;
  const topics = prefixedRetrievalTopics(prefix);
  const indices = retrievalIndexNames(prefix);
  const cleanup: RetrievalIndexNames[] = [indices];
  let embedder: Embedder;
  let firstRun: StoredDocument[] = [];

  const start = (groupId: string, options: { elasticsearchUrl?: string } = {}) =>
    startTestIndexer({
      elasticsearchUrl: options.elasticsearchUrl ?? infra.elasticsearchUrl,
      embedder,
      topics,
      indexPrefix: prefix,
      groupId,
      retry: { initialMs: 100, maxMs: 1_000 },
    });

  beforeAll(async () => {
    // The real local model (`npm run models:setup`): what production stores beside each vector.
    embedder = await OnnxMiniLmEmbedder.load();
    await publishAll(kafka, topics);
    const began = performance.now();
    const runtime = await start(`${prefix}indexer`);
    try {
      await settled(runtime, RECORDS);
      const seconds = (performance.now() - began) / 1000;
      firstRun = await allDocuments(es, indices);
      console.log(
        `[retrieval-indexer] ${RECORDS} records → ${firstRun.length} documents in ${seconds.toFixed(2)} s ` +
          `(${(firstRun.length / seconds).toFixed(1)} docs/s incl. group join); counters ${JSON.stringify(runtime.indexer.counters)}`,
      );
    } finally {
      await runtime.stop();
    }
  });

  afterAll(async () => {
    for (const names of cleanup) {
      for (const index of Object.values(names)) {
        await es.indices.delete({ index, ignore_unavailable: true });
        await es.indices.deleteIndexTemplate({ name: index }).catch(() => undefined);
      }
    }
    await es.close();
  });

  it('should create the three indices with English text and 384-dim cosine HNSW vectors', async () => {
    for (const index of [indices.memories, indices.episodes, indices.turns]) {
      const mapping = await es.indices.getMapping({ index });
      const properties = mapping[index].mappings.properties!;
      expect(properties.embedding).toMatchObject({
        type: 'dense_vector',
        dims: 384,
        index: true,
        similarity: 'cosine',
        index_options: { type: 'hnsw' },
      });
      expect(properties.text).toMatchObject({ type: 'text', analyzer: 'english' });
      expect(properties.tenantId).toEqual({ type: 'keyword' });
    }
  });

  it('should keep access counters in an index of their own, without vectors', async () => {
    const mapping = await es.indices.getMapping({ index: indices.memoryAccess });
    expect(mapping[indices.memoryAccess].mappings).toMatchObject({
      dynamic: 'strict',
      properties: {
        tenantId: { type: 'keyword' },
        projectId: { type: 'keyword' },
        memoryId: { type: 'keyword' },
        accessCount: { type: 'long' },
        lastAccessedAt: { type: 'date' },
      },
    });
    expect(Object.keys(mapping[indices.memoryAccess].mappings.properties!)).toHaveLength(5);
  });

  it('should stem with the english analyzer of this server', async () => {
    const analysed = await es.indices.analyze({
      index: indices.turns,
      field: 'text',
      text: 'Refreshing the tokens',
    });
    expect(analysed.tokens!.map((token) => token.token)).toEqual(['refresh', 'token']);
  });

  it('should set the indices up idempotently and refuse a model of another dimension', async () => {
    await expect(ensureRetrievalIndices(es, indices, { dims: 384 })).resolves.toEqual({
      memories: 'exists',
      episodes: 'exists',
      turns: 'exists',
      memoryAccess: 'exists',
    });
    await expect(ensureRetrievalIndices(es, indices, { dims: 768 })).rejects.toThrow(
      MisconfigurationError,
    );
    // The refusal left the template alone: it still says 384.
    const { index_templates: templates } = await es.indices.getIndexTemplate({
      name: indices.memories,
    });
    const embedding = templates[0].index_template.template!.mappings!.properties!.embedding;
    expect(embedding).toMatchObject({ dims: 384 });
  });

  it('should add the fields a newer version maps to an existing index, and refuse a changed type', async () => {
    const names = retrievalIndexNames(`${uniqueName('it-retrieval-upgrade')}.`);
    cleanup.push(names);
    const memories = retrievalIndexDefinition('memories', { dims: 384 });
    const { citationText: _added, ...older } = memories.mappings!.properties!;
    await es.indices.create({
      index: names.memories,
      settings: memories.settings,
      mappings: { ...memories.mappings, properties: older },
    });
    const episodes = retrievalIndexDefinition('episodes', { dims: 384 });
    await es.indices.create({
      index: names.episodes,
      settings: episodes.settings,
      mappings: {
        ...episodes.mappings,
        properties: { ...episodes.mappings!.properties, tags: { type: 'long' } },
      },
    });

    await expect(ensureRetrievalIndices(es, names, { dims: 384 })).rejects.toThrow(
      new RegExp(`index ${names.episodes} has a mapping this version cannot extend`),
    );
    const mapping = await es.indices.getMapping({ index: names.memories });
    expect(mapping[names.memories].mappings.properties!.citationText).toEqual({
      type: 'text',
      index: false,
    });
  });

  it('should index memories with their fields, vector, model id and provenance', async () => {
    const doc = await source(es, indices.memories, 'm-refresh');
    expect(doc).toMatchObject({
      memoryId: 'm-refresh',
      tenantId: 'acme',
      projectId: 'acme/api',
      memoryType: 'gotcha',
      content: MEMORIES[0].content,
      text: MEMORIES[0].content,
      relatedFiles: ['src/auth/refresh.ts'],
      embeddingModel: 'all-minilm-l6-v2-q@1.20.0-beta30',
      embeddingDims: 384,
      provenance: {
        tenantId: 'acme',
        projectId: 'acme/api',
        sessionIds: ['session-1', 'session-2', 'session-3'],
        episodeIds: ['episode-1'],
        eventIds: ['source-m-refresh'],
        memoryId: 'm-refresh',
      },
    });
    expect(doc).not.toHaveProperty('type');
    // `_source` keeps the vector packed only (the numbers are indexed for kNN, not stored).
    expect(doc).not.toHaveProperty('embedding');
    const vector = unpackVector(doc.embeddingPacked as string);
    expect(vector).toHaveLength(384);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
    const [expected] = await embedder.embed([MEMORIES[0].content]);
    expect(vector.map((v) => Math.fround(v))).toEqual(Array.from(expected));
  });

  it('should delete the memory a tombstone names', async () => {
    expect(await es.exists({ index: indices.memories, id: 'm-deleted' })).toBe(false);
    expect((await es.count({ index: indices.memories })).count).toBe(4);
  });

  it('should dead-letter the memory Elasticsearch refuses, with the reason, and index the rest', async () => {
    expect(await es.exists({ index: indices.memories, id: 'm-poison' })).toBe(false);
    const [dead] = await readCommitted(kafka, deadLetterTopic(topics.memories), 1);
    const header = (name: string) => dead.headers?.[name]?.toString();
    expect(dead.key?.toString()).toBe('m-poison');
    expect(header(DLQ_HEADERS.errorClass)).toBe('DocumentRejectedError');
    expect(header(DLQ_HEADERS.errorMessage)).toMatch(
      /m-poison: 400 document_parsing_exception: .*sessionId/,
    );
    expect(header(DLQ_HEADERS.service)).toBe('retrieval');
    expect(header(DLQ_HEADERS.sourceTopic)).toBe(topics.memories);
  });

  it('should index episodes with their prompt range as provenance', async () => {
    expect((await es.count({ index: indices.episodes })).count).toBe(2);
    const doc = await source(es, indices.episodes, 'e-auth');
    expect(doc).toMatchObject({
      episodeId: 'e-auth',
      threadId: 'thread-1',
      hotFiles: [{ path: 'src/auth/refresh.ts', touches: 3 }],
      embeddingModel: embedder.id,
      embeddingDims: 384,
      provenance: { episodeIds: ['e-auth'], promptIds: [1, 2, 3], sessionIds: ['session-1'] },
    });
    expect(doc.text).toContain('fix the race between logout and the auth token refresh');
    expect(doc.text).toContain('refresh runs behind the auth mutex');
  });

  it('should index user prompts only, redacted', async () => {
    expect((await es.count({ index: indices.turns })).count).toBe(USER_PROMPTS.length);
    expect(await es.exists({ index: indices.turns, id: 'p-agent' })).toBe(false);
    expect(await es.exists({ index: indices.turns, id: 'p-system' })).toBe(false);
    const secret = await source(es, indices.turns, 'p-secret');
    expect(secret.text).not.toContain(SECRET);
    expect(secret.text).toMatch(/\[REDACTED:[a-z-]+\]/);
    expect(JSON.stringify(secret)).not.toContain(SECRET);
    const turn = await source(es, indices.turns, 'p-refresh');
    expect(turn).toMatchObject({
      promptId: 1,
      source: 'user',
      embeddingModel: embedder.id,
      provenance: { promptIds: [1], eventIds: ['p-refresh'], sessionIds: ['session-1'] },
    });
  });

  it('should find "token refresh" with BM25 for "refreshing tokens" (stemmed English text)', async () => {
    for (const [index, expected] of [
      [indices.turns, 'p-refresh'],
      [indices.memories, 'm-refresh'],
      [indices.episodes, 'e-auth'],
    ] as const) {
      const result = await es.search({
        index,
        query: {
          bool: {
            must: { match: { text: 'refreshing tokens' } },
            filter: [{ term: { tenantId: 'acme' } }, { term: { projectId: 'acme/api' } }],
          },
        },
      });
      expect(result.hits.hits[0]?._id).toBe(expected);
    }
  });

  it("should put the expected memory first in a kNN search with the query's embedding", async () => {
    const [query] = await embedder.embed(['logging out while the session token is being renewed']);
    const result = await es.search({
      index: indices.memories,
      knn: {
        field: 'embedding',
        query_vector: Array.from(query),
        k: 3,
        num_candidates: 20,
        // Never compare vectors of two models.
        filter: [{ term: { tenantId: 'acme' } }, { term: { embeddingModel: embedder.id } }],
      },
    });
    expect(result.hits.hits.map((hit) => hit._id)[0]).toBe('m-refresh');
  });

  it('should leave the same documents when the topics are replayed from offset 0', async () => {
    expect(firstRun.length).toBe(4 + EPISODES.length + USER_PROMPTS.length);
    const began = performance.now();
    const replay = await start(`${prefix}replay`);
    let seconds: number;
    try {
      await settled(replay, RECORDS);
      seconds = (performance.now() - began) / 1000;
    } finally {
      await replay.stop(); // up to a fetch wait (5 s): kafkajs lets the long poll finish
    }
    const again = await allDocuments(es, indices);
    console.log(
      `[retrieval-indexer] replay of ${RECORDS} records in ${seconds.toFixed(2)} s (${(again.length / seconds).toFixed(1)} docs/s)`,
    );
    const withoutVersion = (docs: StoredDocument[]) =>
      docs.map(({ index, id, source: body }) => ({ index, id, source: body }));
    expect(withoutVersion(again)).toEqual(withoutVersion(firstRun));
    // Explicit ids: a replay overwrites (the version counts the writes), it never adds.
    for (const [i, doc] of again.entries()) {
      expect(doc.version).toBeGreaterThanOrEqual(firstRun[i].version ?? 0);
    }
  });

  it('should pause through an Elasticsearch outage, commit nothing, and index everything after it', async () => {
    const outagePrefix = `${uniqueName('it-retrieval-outage')}.`;
    const outageTopics = prefixedRetrievalTopics(outagePrefix);
    const outageIndices = retrievalIndexNames(outagePrefix);
    cleanup.push(outageIndices);
    const esUrl = new URL(infra.elasticsearchUrl);
    const proxy = new CuttableProxy(esUrl.hostname, Number(esUrl.port || 9200));
    await proxy.open();
    await ensureInputTopics(kafka, outageTopics);
    const groupId = `${outagePrefix}indexer`;
    const runtime = await startTestIndexer({
      elasticsearchUrl: `http://127.0.0.1:${proxy.port}`,
      embedder,
      topics: outageTopics,
      indexPrefix: outagePrefix,
      groupId,
      retry: { initialMs: 100, maxMs: 1_000 },
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await publishMemories(kafka, outageTopics.memories, [MEMORIES[0]]);
      await settled(runtime, 1);
      await proxy.cut();
      await publishMemories(kafka, outageTopics.memories, MEMORIES.slice(1, 4));
      await eventually(() => (runtime.consumer.counters.retries >= 2 ? true : undefined));
      const committed = async () => {
        const [entry] = await admin.fetchOffsets({ groupId, topics: [outageTopics.memories] });
        return entry.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
      };
      expect(await committed()).toBe(1);
      await es.indices.refresh({ index: outageIndices.memories });
      expect((await es.count({ index: outageIndices.memories })).count).toBe(1);

      await proxy.open();
      await settled(runtime, 4);
      await es.indices.refresh({ index: outageIndices.memories });
      expect((await es.count({ index: outageIndices.memories })).count).toBe(4);
      expect(runtime.consumer.counters.deadLettered).toBe(0);
      await eventually(async () => ((await committed()) === 4 ? true : undefined));
    } finally {
      await admin.disconnect();
      await runtime.stop();
      await proxy.cut();
    }
  });

  it('should run as the Nest service and index a burst of prompts', async () => {
    const burstPrefix = `${uniqueName('it-retrieval-service')}.`;
    const burstTopics = prefixedRetrievalTopics(burstPrefix);
    const burstIndices = retrievalIndexNames(burstPrefix);
    cleanup.push(burstIndices);
    const subjects = ['token refresh', 'checkout grid', 'consumer rebalance', 'graph writes'];
    const verbs = ['why does', 'how do I fix', 'where is', 'who broke'];
    const burst = Array.from({ length: 200 }, (_, i) =>
      promptRecord({
        eventId: `burst-${i}`,
        sessionId: `session-${i % 7}`,
        promptId: i,
        text: `${verbs[i % 4]} the ${subjects[Math.floor(i / 4) % 4]} in module ${i} after change ${i * 7}`,
      }),
    );
    const saved = { ...process.env };
    Object.assign(process.env, {
      ENGRAM_TOPIC_PREFIX: burstPrefix,
      ENGRAM_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
      ENGRAM_SCHEMA_REGISTRY_URL: infra.registryUrl,
      ENGRAM_ES_URL: infra.elasticsearchUrl,
      ENGRAM_RETRY_INITIAL_MS: '100',
      ENGRAM_RETRY_MAX_MS: '1000',
    });
    resetConfigForTests();
    // The indexer on distributed mode's providers, as its main and `engram start --distributed`.
    const app = await NestFactory.createApplicationContext(
      { module: RetrievalModule, imports: DISTRIBUTED_RETRIEVAL_PROVIDERS },
      { logger: false, abortOnError: false },
    );
    try {
      const publisher = new EventPublisher(kafka, testRegistry());
      const codec = onTopic(contractCodec('agent.prompts.v1'), burstTopics.prompts);
      const tagged = burst.map((prompt) => ({ type: 'PromptSubmitted' as const, ...prompt }));
      const indexed = (atLeast: number) =>
        eventually(
          async () => {
            await es.indices.refresh({ index: burstIndices.turns });
            const { count } = await es.count({ index: burstIndices.turns });
            return count >= atLeast ? count : undefined;
          },
          { timeoutMs: 90_000, intervalMs: 100 },
        );
      await publisher.connect();
      let seconds: number;
      try {
        // One prompt first: the group has joined and the model is warm before the clock starts.
        await publisher.publish(codec, tagged.slice(0, 1));
        await indexed(1);
        const began = performance.now();
        await publisher.publish(codec, tagged.slice(1));
        await indexed(burst.length);
        seconds = (performance.now() - began) / 1000;
      } finally {
        await publisher.disconnect();
      }
      console.log(
        `[retrieval-indexer] service indexed a burst of ${burst.length - 1} prompts in ${seconds.toFixed(2)} s (${((burst.length - 1) / seconds).toFixed(0)} docs/s, embedding included)`,
      );
      expect((await es.count({ index: burstIndices.turns })).count).toBe(burst.length);
    } finally {
      await app.close();
      process.env = saved;
      resetConfigForTests();
    }
  });
});
