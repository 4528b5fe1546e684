import type { ToolCallObserved } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import {
  EmbeddedStreamPlatform,
  SqliteEventLog,
  SqliteEventLogAdapter,
  SqliteRetrievalStore,
} from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EVENT_FIXTURES } from '../../../libs/contracts/src/testing/event-fixtures';
import { type RetrievalBackend } from './retrieval-backend';
import { sqliteBackend } from './sqlite-backend';
import { LEXICAL_ONLY_EMBEDDER } from './retrieval-embedders';
import type { ToolCallIndex } from './retrieval-indexer';
import { prefixedRetrievalTopics } from './retrieval-topics';
import { retrievalCodecs, startRetrievalWithRecall } from './retrieval.topology';
import { memoryRecord, PROJECT, promptRecord, TENANT } from './testing/records';

// The one retrieval topology on the embedded platform: the same four subscriptions as on Kafka
// (tool calls included), what reaches the SQLite store searchable through the recall stack on the
// same backend, and tool calls kept exactly when the backend has a tool-call index.
const TOPICS = prefixedRetrievalTopics('t.');
const GROUP = 't.engram-retrieval-indexer';
const codecs = retrievalCodecs(TOPICS);

/** As the contract codecs publish them: the record with its type. */
function toolCall(eventId: string) {
  const call: ToolCallObserved = {
    ...EVENT_FIXTURES.ToolCallObserved,
    eventId,
    sessionId: `s-${eventId}`,
  };
  return { type: 'ToolCallObserved' as const, ...call };
}

describe('the retrieval topology on the embedded platform', () => {
  let dir: string;
  let log: SqliteEventLog;
  let events: SqliteEventLogAdapter;
  let store: SqliteRetrievalStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-topology-'));
    log = SqliteEventLog.open({ dataDir: dir });
    events = new SqliteEventLogAdapter(log);
    store = SqliteRetrievalStore.open({ dataDir: dir });
  });

  afterEach(() => {
    store.close();
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (backend: RetrievalBackend) =>
    startRetrievalWithRecall({
      platform: new EmbeddedStreamPlatform(log),
      backend,
      embedder: LEXICAL_ONLY_EMBEDDER,
      ranking: DEFAULT_RANKING_CONFIG,
      topics: TOPICS,
      groupId: GROUP,
      partitions: 2,
      retry: { initialMs: 10, maxMs: 50 },
    });

  /** Every input record handled and committed by the indexer's group. */
  const caughtUp = async (inputs: string[]) => {
    for (const topic of inputs) {
      const ends = log.endOffsets(topic);
      await vi.waitFor(
        () => {
          const committed = log.committedOffsets(GROUP, topic);
          expect(ends.map((_, p) => committed.get(p) ?? 0)).toEqual(ends);
        },
        { timeout: 5_000 },
      );
    }
  };

  it('should consume the four inputs and make memories and prompts recallable on the same store', async () => {
    const retrieval = await start(sqliteBackend(store));
    try {
      expect(retrieval.inputs).toEqual([
        TOPICS.memories,
        TOPICS.episodes,
        TOPICS.prompts,
        TOPICS.toolCalls,
      ]);
      expect(log.topic(TOPICS.memories)?.compacted).toBe(true);
      await events.publish(codecs.memories, [
        {
          type: 'Memory',
          ...memoryRecord({
            memoryId: 'm-mutex',
            content: 'Token refresh must hold the session mutex',
          }),
        },
      ]);
      await events.publish(codecs.prompts, [
        {
          type: 'PromptSubmitted',
          ...promptRecord({ eventId: 'p-1', text: 'why does the flaky checkout test time out' }),
        },
      ]);
      await events.publish(codecs.toolCalls, [toolCall('tc-1'), toolCall('tc-2')]);
      await caughtUp(retrieval.inputs);

      const recalled = await retrieval.recall.service.recall({
        tenantId: TENANT,
        projectId: PROJECT,
        query: 'session mutex',
        tier: 'memories',
        k: 5,
      });
      expect(
        recalled.results.flatMap((hit) =>
          hit.tier === 'memories' ? [hit.memory.memory.memoryId] : [],
        ),
      ).toEqual(['m-mutex']);
      const turns = await retrieval.recall.service.recall({
        tenantId: TENANT,
        projectId: PROJECT,
        query: 'flaky checkout',
        tier: 'turns',
        k: 5,
      });
      expect(turns.results.map((hit) => hit.tier)).toEqual(['turns']);
      // The SQLite store keeps no tool calls (the embedded friction report reads the log):
      // consumed and committed, nothing written.
      expect(retrieval.indexer.counters.toolCallsIndexed).toBe(0);
      expect(retrieval.consumer.counters.processed).toBe(4);
    } finally {
      await retrieval.stop();
    }
  });

  it('should hand tool calls to the backend when it has a tool-call index, once per eventId', async () => {
    const kept: ToolCallObserved[] = [];
    const toolCalls: ToolCallIndex = {
      write: (calls) => {
        kept.push(...calls);
        return Promise.resolve({ indexed: calls.length, requests: 1 });
      },
    };
    const retrieval = await start({ ...sqliteBackend(store), toolCalls });
    try {
      await events.publish(codecs.toolCalls, [toolCall('tc-1'), toolCall('tc-2')]);
      await caughtUp([TOPICS.toolCalls]);
      expect(kept.map((call) => call.eventId).sort()).toEqual(['tc-1', 'tc-2']);
      expect(retrieval.indexer.counters.toolCallsIndexed).toBe(2);
    } finally {
      await retrieval.stop();
    }
  });
});
