// Issue #19, finding 6: the retrieval service (indexer and recall server) had no SIGKILL test.
// The compiled service runs as a child process on real Kafka, Schema Registry and
// Elasticsearch; it is SIGKILLed up to five times, each time just after a commit it made while
// most of the input is still to come, then restarted. Its indices must then hold exactly what an uninterrupted in-process
// indexer writes from the same records (other topics and indices): 0 lost, 0 duplicated.
import { OnnxMiniLmEmbedder } from '@engram/ai';
import type { Memory, PromptSubmitted } from '@engram/contracts';
import { createElasticsearchClient, retrievalIndexNames } from '@engram/elasticsearch';
import {
  contractCodec,
  ensureTopics,
  EventPublisher,
  valueSubject,
  type TopicCodec,
} from '@engram/kafka';
import type { Client } from '@elastic/elasticsearch';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  prefixedRetrievalTopics,
  type RetrievalTopics,
} from '../../apps/retrieval/src/retrieval-topics';
import { DEFAULT_INDEXER_GROUP_ID } from '../../apps/retrieval/src/retrieval.topology';
import { startTestIndexer } from './support/retrieval-indexer';
import { memoryRecord, PROJECT, T0, TENANT } from '../../apps/retrieval/src/testing/records';
import { freePort } from '../support/free-port';
import { serviceProcess } from './support/service-process';
import { testKafka, testRegistry } from './support/kafka-fixtures';
import { FAST_TAKEOVER_ENV, killAfterCommits } from './support/kill-rounds';
import { eventually, uniqueName } from './support/unique';

const ROOT = join(__dirname, '..', '..');
const PARTITIONS = 3;
const TOPICS = ['auth', 'billing', 'search', 'queue', 'cache', 'deploy', 'email', 'pdf'];

/** Memories and user turns enough for the embedding to take seconds: work left at the kill. */
function records(count: number) {
  const memories: Memory[] = Array.from({ length: count }, (_, i) => {
    const topic = TOPICS[i % TOPICS.length];
    return memoryRecord({
      memoryId: `crash-m${i}`,
      content: `The ${topic} module ${i}: retry ${i % 7} times, then log the ${topic} failure ${i}`,
      relatedFiles: [`src/${topic}/file-${i % 13}.ts`],
      sessionId: `crash-s${i % 40}`,
      timestamp: T0 + i * 1_000,
    });
  });
  const prompts: PromptSubmitted[] = Array.from({ length: count / 2 }, (_, i) => ({
    eventId: `crash-p${i}`,
    tenantId: TENANT,
    projectId: PROJECT,
    sessionId: `crash-s${i % 40}`,
    agentId: 'claude-code',
    userId: 'dev-1',
    timestamp: T0 + i * 2_000,
    schemaVersion: 1,
    promptId: Math.floor(i / 40) + 1,
    source: 'user',
    channel: 'cli',
    channelKind: 'implicit',
    explicitThreadId: null,
    text: `why does the ${TOPICS[i % TOPICS.length]} job ${i} fail after the upgrade`,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
  }));
  return { memories, prompts };
}

function onTopic<E>(codec: TopicCodec<E>, topic: string): TopicCodec<E> {
  return { ...codec, topic, subject: valueSubject(topic) };
}

async function publish(topics: RetrievalTopics, input: ReturnType<typeof records>) {
  const kafka = testKafka();
  await ensureTopics(kafka, [
    { topic: topics.memories, partitions: PARTITIONS, compacted: true },
    { topic: topics.episodes, partitions: PARTITIONS, compacted: true },
    { topic: topics.prompts, partitions: PARTITIONS },
  ]);
  const publisher = new EventPublisher(kafka, testRegistry());
  await publisher.connect();
  try {
    await publisher.publish(
      onTopic(contractCodec('memory.memories.v1'), topics.memories),
      input.memories.map((m) => ({ type: 'Memory' as const, ...m })),
    );
    await publisher.publish(
      onTopic(contractCodec('agent.prompts.v1'), topics.prompts),
      input.prompts.map((p) => ({ type: 'PromptSubmitted' as const, ...p })),
    );
  } finally {
    await publisher.disconnect();
  }
}

/**
 * Every document of the three indices, without the run's names; vectors rounded (a batch of
 * other texts pads them differently, which moves the last digits).
 */
async function documents(es: Client, prefix: string): Promise<string[]> {
  const indices = Object.values(retrievalIndexNames(prefix));
  await es.indices.refresh({ index: indices, ignore_unavailable: true });
  const result = await es.search<Record<string, unknown>>({
    index: indices,
    size: 10_000,
    query: { match_all: {} },
    ignore_unavailable: true,
  });
  return result.hits.hits
    .map((hit) => {
      const source = { ...hit._source };
      for (const [key, value] of Object.entries(source)) {
        if (Array.isArray(value) && value.length > 100 && typeof value[0] === 'number') {
          source[key] = (value as number[]).map((x) => Math.round(x * 1e4) / 1e4);
        }
      }
      return JSON.stringify([hit._index.replace(prefix.toLowerCase(), 'PREFIX'), hit._id, source]);
    })
    .sort();
}

describe('retrieval service SIGKILLed mid-stream (issue #19)', () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const input = records(1_200);
  const prefixes: string[] = [];

  beforeAll(() => {
    // The killed run is a separate process running the compiled service.
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  });

  afterAll(async () => {
    for (const prefix of prefixes) {
      for (const index of Object.values(retrievalIndexNames(prefix))) {
        await es.indices.delete({ index, ignore_unavailable: true });
        await es.indices.deleteIndexTemplate({ name: index }).catch(() => undefined);
      }
    }
    await es.close();
  });

  it('should index exactly what an uninterrupted run indexes after a SIGKILL', async () => {
    const expectedPrefix = `${uniqueName('ret-ref')}.`;
    prefixes.push(expectedPrefix);
    const referenceTopics = prefixedRetrievalTopics(expectedPrefix);
    await publish(referenceTopics, input);
    const embedder = await OnnxMiniLmEmbedder.load();
    const reference = await startTestIndexer({
      embedder,
      topics: referenceTopics,
      indexPrefix: expectedPrefix,
      groupId: `${expectedPrefix}indexer`,
      partitions: PARTITIONS,
      retry: { initialMs: 100, maxMs: 1_000 },
      idleMerge: false,
    });
    const total = input.memories.length + input.prompts.length;
    try {
      await eventually(() => (reference.consumer.counters.processed >= total ? true : undefined), {
        timeoutMs: 240_000,
        intervalMs: 500,
      });
    } finally {
      await reference.stop();
    }
    const expected = await documents(es, expectedPrefix);
    expect(expected).toHaveLength(total);

    const prefix = `${uniqueName('ret-kill')}.`;
    prefixes.push(prefix);
    await publish(prefixedRetrievalTopics(prefix), input);
    const service = serviceProcess('retrieval', {
      ...FAST_TAKEOVER_ENV,
      ENGRAM_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
      ENGRAM_SCHEMA_REGISTRY_URL: infra.registryUrl,
      ENGRAM_ES_URL: infra.elasticsearchUrl,
      ENGRAM_TOPIC_PREFIX: prefix,
      ENGRAM_SEGMENTER_PARTITIONS: String(PARTITIONS),
      ENGRAM_RETRY_INITIAL_MS: '100',
      ENGRAM_RETRY_MAX_MS: '2000',
      ENGRAM_RECALL_GRPC_URL: `127.0.0.1:${await freePort()}`,
      ENGRAM_METRICS_PORT: String(await freePort()),
    });
    const { start, alive, stop } = service;
    // Up to five kills, each 0–150 ms after a commit the killed process made: mid-stream.
    const kills = await killAfterCommits(service, {
      groupId: `${prefix}${DEFAULT_INDEXER_GROUP_ID}`,
      inputs: [prefixedRetrievalTopics(prefix).memories, prefixedRetrievalTopics(prefix).prompts],
      kills: 5,
      onKill: (round, committed) =>
        console.log(
          `[retrieval] round ${round}: SIGKILL after committed input offsets ${committed}`,
        ),
    });
    expect(kills.length).toBeGreaterThanOrEqual(3);
    const last = start();
    try {
      let actual: string[] = [];
      await eventually(
        async () => {
          alive(last);
          actual = await documents(es, prefix).catch(() => actual);
          return JSON.stringify(actual) === JSON.stringify(expected) ? true : undefined;
        },
        { timeoutMs: 240_000, intervalMs: 2_000 },
      ).catch(() => undefined);
      console.log(`[retrieval] ${kills.length} kills after commits (${kills.join(', ')})`);
      expect(actual).toEqual(expected);
    } finally {
      await stop(last, 'SIGTERM');
    }
  }, 600_000);
});
