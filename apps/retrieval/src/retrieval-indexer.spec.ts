import type { Embedder } from '@engram/ai';
import type { BulkResponse } from '@elastic/elasticsearch/lib/api/types';
import { DownstreamUnavailableError } from '@engram/core';
import type { ToolCallObserved } from '@engram/contracts';
import {
  BulkWriter,
  elasticsearchStoreWriter,
  elasticsearchToolCallWriter,
  retrievalIndexNames,
  type BulkSend,
} from '@engram/elasticsearch';
import { describe, expect, it, vi } from 'vitest';
import { RetrievalIndexer } from './retrieval-indexer';
import { delivered, episodeRecord, memoryRecord, promptRecord, tombstone } from './testing/records';

const INDICES = retrievalIndexNames('t.');

interface SentOperation {
  action: string;
  index: string;
  id: string;
  document?: Record<string, unknown>;
}

/**
 * The indexer on the Elasticsearch store's writer: parses the bulk requests it sent; every
 * operation succeeds unless `fail` says otherwise.
 */
function setup(fail?: () => Error) {
  const sent: SentOperation[] = [];
  const send = vi.fn<BulkSend>((lines) => {
    if (fail) return Promise.reject(fail());
    const items: object[] = [];
    for (let i = 0; i < lines.length; i += 1) {
      const meta = JSON.parse(lines[i]) as Record<string, { _index: string; _id: string }>;
      const [action] = Object.keys(meta);
      const op: SentOperation = { action, index: meta[action]._index, id: meta[action]._id };
      if (action === 'index') op.document = JSON.parse(lines[++i]) as Record<string, unknown>;
      sent.push(op);
      items.push({ [action]: { _id: op.id, _index: op.index, status: 200, result: 'updated' } });
    }
    return Promise.resolve({ took: 1, errors: false, items } as BulkResponse);
  });
  const embedder: Embedder & { embed: ReturnType<typeof vi.fn> } = {
    id: 'fake-model@1',
    dims: 3,
    embed: vi.fn((texts: readonly string[]) =>
      Promise.resolve(texts.map((_, i) => new Float32Array([1, i, 0.5]))),
    ),
  };
  const sut = new RetrievalIndexer(
    embedder,
    elasticsearchStoreWriter(new BulkWriter(send), INDICES),
    null,
    elasticsearchToolCallWriter(new BulkWriter(send), 't.engram-tool-calls'),
  );
  return { sut, sent, send, embedder };
}

describe('RetrievalIndexer', () => {
  describe('handleMemories', () => {
    it('should index memories with their vector and model, and delete on a tombstone', async () => {
      const { sut, sent, embedder } = setup();
      await sut.handleMemories([
        delivered(memoryRecord({ memoryId: 'm1', content: 'one' })),
        tombstone('m2'),
      ]);
      expect(embedder.embed).toHaveBeenCalledWith(['one']);
      expect(sent).toMatchObject([
        {
          action: 'index',
          index: 't.engram-memories',
          id: 'm1',
          document: {
            memoryId: 'm1',
            text: 'one',
            embedding: [1, 0, 0.5],
            embeddingModel: 'fake-model@1',
            embeddingDims: 3,
          },
        },
        { action: 'delete', index: 't.engram-memories', id: 'm2' },
        // The tombstoned memory's access counters go with it (a second, small request).
        { action: 'delete', index: 't.engram-memory-access', id: 'm2' },
      ]);
      expect(sut.counters).toMatchObject({
        indexed: 1,
        deleted: 1,
        accessCountersDeleted: 1,
        bulkRequests: 2,
        embedded: 1,
      });
    });

    it('should write only the last record of a key within a batch', async () => {
      const { sut, sent, embedder } = setup();
      await sut.handleMemories([
        delivered(memoryRecord({ memoryId: 'm1', content: 'old' })),
        delivered(memoryRecord({ memoryId: 'm1', content: 'new' })),
        delivered(memoryRecord({ memoryId: 'm3', content: 'gone' })),
        tombstone('m3'),
      ]);
      expect(embedder.embed).toHaveBeenCalledWith(['new']);
      expect(sent.map((op) => `${op.action} ${op.index} ${op.id}`)).toEqual([
        'index t.engram-memories m1',
        'delete t.engram-memories m3',
        'delete t.engram-memory-access m3',
      ]);
    });

    it('should let an outage through (the consumer retries) and count nothing', async () => {
      const { sut } = setup(() => new DownstreamUnavailableError('elasticsearch down'));
      await expect(
        sut.handleMemories([delivered(memoryRecord({ memoryId: 'm1' }))]),
      ).rejects.toBeInstanceOf(DownstreamUnavailableError);
      expect(sut.counters.indexed).toBe(0);
    });
  });

  describe('handleEpisodes', () => {
    it('should index an episode without a vector when it has no text yet', async () => {
      const { sut, sent, embedder } = setup();
      await sut.handleEpisodes([
        delivered(
          episodeRecord({
            episodeId: 'e1',
            intent: null,
            intentKeywords: [],
            hotFiles: [],
            summary: null,
          }),
        ),
      ]);
      expect(embedder.embed).not.toHaveBeenCalled();
      expect(sent[0].document).toMatchObject({
        episodeId: 'e1',
        text: '',
        embedding: null,
        embeddingModel: null,
      });
    });
  });

  describe('handlePrompts', () => {
    it('should index user prompts redacted, and skip agent prompts', async () => {
      const { sut, sent } = setup();
      await sut.handlePrompts([
        delivered(promptRecord({ eventId: 'p1', text: 'use key AKIAIOSFODNN7EXAMPLE now' })),
        delivered(promptRecord({ eventId: 'p2', source: 'agent', text: 'agent says hi' })),
      ]);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ index: 't.engram-turns', id: 'p1' });
      expect(sent[0].document!.text).not.toContain('AKIAIOSFODNN7EXAMPLE');
      expect(sut.counters.skipped).toBe(1);
    });

    it('should send nothing for a batch of agent prompts', async () => {
      const { sut, send } = setup();
      await sut.handlePrompts([delivered(promptRecord({ eventId: 'p2', source: 'agent' }))]);
      expect(send).not.toHaveBeenCalled();
    });
  });

  describe('handleToolCalls', () => {
    const call = (eventId: string, fields: Partial<ToolCallObserved> = {}): ToolCallObserved => ({
      eventId,
      tenantId: 't1',
      projectId: 'p1',
      sessionId: 's1',
      agentId: 'codex',
      userId: null,
      timestamp: 1_000,
      schemaVersion: 1,
      promptId: 2,
      stepIndex: 0,
      toolName: 'Bash',
      filePaths: ['src/a.ts'],
      command: 'npm test',
      argsJson: '{}',
      outcome: 'error',
      errorMessage: 'ECONNREFUSED 127.0.0.1:5432 in /tmp/x1/db.ts',
      durationMs: 1_500,
      tokensUsed: null,
      mcp: false,
      ...fields,
    });

    it('should write compact documents by eventId, once per batch, without embedding', async () => {
      const { sut, sent, embedder } = setup();
      await sut.handleToolCalls([
        delivered(call('c1')),
        delivered(call('c1')),
        delivered(call('c2', { outcome: 'ok', errorMessage: null, command: '  ' })),
      ]);
      expect(embedder.embed).not.toHaveBeenCalled();
      expect(sent.map((op) => `${op.action} ${op.index} ${op.id}`)).toEqual([
        'index t.engram-tool-calls c1',
        'index t.engram-tool-calls c2',
      ]);
      // The call's fields but its arguments and raw outcome, and what the report groups by.
      const { argsJson: _args, outcome: _outcome, ...kept } = call('c1');
      expect(sent[0].document).toEqual({
        ...kept,
        failed: true,
        errorPattern: 'ECONNREFUSED <n>:<n> in <path>',
      });
      // A blank command is no command; an ok call has no error.
      expect(sent[1].document).toMatchObject({
        command: null,
        failed: false,
        errorPattern: null,
        errorMessage: null,
      });
      expect(sut.counters).toMatchObject({ toolCallsIndexed: 2, bulkRequests: 1 });
    });

    it('should cut long commands so they stay indexed keywords', async () => {
      const { sut, sent } = setup();
      await sut.handleToolCalls([delivered(call('c3', { command: 'x'.repeat(5_000) }))]);
      expect((sent[0].document!.command as string).length).toBe(1_000);
    });

    it('should do nothing without a tool-call index (embedded mode)', async () => {
      const send = vi.fn<BulkSend>();
      const embedder = { id: 'm', dims: 3, embed: vi.fn() };
      const sut = new RetrievalIndexer(
        embedder,
        elasticsearchStoreWriter(new BulkWriter(send), INDICES),
      );
      await sut.handleToolCalls([delivered(call('c1'))]);
      expect(send).not.toHaveBeenCalled();
      expect(sut.counters.toolCallsIndexed).toBe(0);
    });
  });
});
