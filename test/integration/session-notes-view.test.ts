import { OnnxMiniLmEmbedder, type Embedder } from '@engram/ai';
import { DEFAULT_RANKING_CONFIG, type EventLogPort } from '@engram/core';
import {
  createElasticsearchClient,
  ensureRetrievalIndices,
  retrievalIndexNames,
} from '@engram/elasticsearch';
import type { KafkaStreamPlatform } from '@engram/kafka';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openElasticsearchRecall } from '../../apps/retrieval/src/elasticsearch-retrieval';
import {
  startRecallServer,
  type RecallServerRuntime,
} from '../../apps/retrieval/src/recall-server';
import { publishRecordsTo } from '../../apps/retrieval/src/record-publisher';
import {
  rememberViewNote,
  sessionEndedEvent,
  sessionNoteIdsIn,
  viewNoteId,
} from '../../apps/retrieval/src/testing/session-note-view.checks';
import { PROJECT, TENANT } from '../../apps/retrieval/src/testing/records';
import { freePort } from '../support/free-port';
import { testPlatform } from './support/kafka-fixtures';
import { eventually, uniqueName } from './support/unique';

// Issue #20 on the real servers: the session notes are a view of agent.lifecycle.v1 on Kafka, so
// two recall servers on Elasticsearch (replicas) share them — a Remember answered by one is
// recallable on the other once its tail has read the event — a restarted server has them back,
// and a SessionEnded on the topic ends them on every server. The embedded twin is
// apps/retrieval/src/session-notes-restart.embedded.spec.ts.

const SCOPE = { tenantId: TENANT, projectId: PROJECT };
const SESSION = 's-replicas';

interface Replica {
  platform: KafkaStreamPlatform;
  server: RecallServerRuntime;
  close(): Promise<void>;
}

describe('session notes as a view of agent.lifecycle.v1 (Kafka + Elasticsearch)', () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const indexPrefix = `${uniqueName('it-notes')}.`;
  const topicPrefix = `${uniqueName('it-notes')}.`;
  // The real model (a query without any of the contract embedder's concepts embeds to zeros,
  // which Elasticsearch's cosine kNN refuses).
  let embedder: Embedder;
  const replicas: Replica[] = [];
  let events: EventLogPort;
  let eventsPlatform: KafkaStreamPlatform;

  /** A recall server as the distributed retrieval service runs it: its own clients. */
  async function startReplica(): Promise<Replica> {
    const platform = await testPlatform();
    const recall = openElasticsearchRecall({
      elasticsearchUrl: infra.elasticsearchUrl,
      indexPrefix,
      warn: () => undefined,
    });
    const log = await platform.eventLog();
    const server = await startRecallServer({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: recall.backend,
      embedder,
      publish: publishRecordsTo(log, topicPrefix),
      lifecycle: { platform, topicPrefix, partitions: 2 },
      url: `127.0.0.1:${await freePort()}`,
      tokens: null,
      logger: false,
    });
    const replica = {
      platform,
      server,
      close: async () => {
        replicas.splice(replicas.indexOf(replica), 1);
        await server.stop();
        await recall.close();
        await platform.close();
      },
    };
    replicas.push(replica);
    return replica;
  }

  /** Waits until `read` holds, and says how long that took. */
  async function timed(read: () => Promise<boolean>): Promise<number> {
    const started = Date.now();
    await eventually(async () => ((await read()) ? true : undefined), { timeoutMs: 60_000 });
    return Date.now() - started;
  }

  beforeAll(async () => {
    embedder = await OnnxMiniLmEmbedder.load();
    await ensureRetrievalIndices(es, retrievalIndexNames(indexPrefix), { dims: embedder.dims });
    eventsPlatform = await testPlatform();
    events = await eventsPlatform.eventLog();
  }, 120_000);

  afterAll(async () => {
    for (const replica of [...replicas]) await replica.close();
    await eventsPlatform?.close();
    const indices = Object.values(retrievalIndexNames(indexPrefix));
    await es.indices.delete({ index: indices, ignore_unavailable: true });
    await es.close();
  });

  it('should share a note between replicas, keep it over a restart and end it at SessionEnded', async () => {
    const noteId = viewNoteId(SCOPE);
    const [a, b] = [await startReplica(), await startReplica()];
    const has = (replica: Replica, sessionId = SESSION) =>
      sessionNoteIdsIn(replica.server, SCOPE, sessionId).then((ids) => ids.includes(noteId));

    await rememberViewNote(a.server, SCOPE, SESSION);
    // The replica that answered: at once.
    expect(await has(a)).toBe(true);
    // The other: once its tail has read the RememberRequested.
    const toReplicaMs = await timed(() => has(b));
    expect(await has(b, 's-other')).toBe(false);
    expect(b.server.notes.notesOf(SCOPE, SESSION, Date.now())[0].memory.embeddingModel).toBe(
      embedder.id,
    );

    // A restarted server (new clients, nothing in memory) reads it back from the topic.
    await a.close();
    const restartedAt = Date.now();
    const restarted = await startReplica();
    await timed(() => has(restarted));
    const restartMs = Date.now() - restartedAt;
    expect(await has(restarted, 's-other')).toBe(false);

    // The session ends: every server drops its notes.
    await publishRecordsTo(events, topicPrefix)([sessionEndedEvent(SCOPE, SESSION)]);
    const endMs = await timed(async () => !(await has(b)) && !(await has(restarted)));
    console.log(
      `session notes over Kafka: on the other replica after ${toReplicaMs} ms, back after a ` +
        `restart in ${restartMs} ms (start included), ended everywhere ${endMs} ms after SessionEnded`,
    );
  }, 240_000);
});
