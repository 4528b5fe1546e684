import { OpenAiCompatibleChatClient } from '@engram/ai';
import { SqliteRetrievalStore, sqliteStoreWriter } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeChatServer,
  type FakeChatServer,
} from '../../../libs/ai/src/testing/fake-chat-server';
import { contractEmbedder } from '../../../libs/core/src/ports/testing/recall-store.contract';
import { RecallService } from './recall.service';
import { RetrievalIndexer } from './retrieval-indexer';
import { TENANT } from './testing/records';
import { indexRpcCorpus, rpcCorpus } from './testing/rpc-corpus';

/** What the model answers: a memory about the database pool, in the corpus's words. */
const HYPOTHETICAL = 'The postgres connection pool is exhausted under load: raise the pool size.';

// HyDE through the real OpenAI-compatible client against an in-process server speaking the chat
// completions wire format, on the real embedded store with the contract's concept embedder.
describe('RecallService with HyDE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-hyde-'));
  const store = SqliteRetrievalStore.open({ dataDir: dir });
  const embedder = contractEmbedder();
  let llm: FakeChatServer;
  let service: RecallService;
  const scope = { tenantId: TENANT, projectId: rpcCorpus(0).memories[0].projectId };

  beforeAll(async () => {
    const indexer = new RetrievalIndexer(embedder, sqliteStoreWriter(store));
    await indexRpcCorpus(indexer, rpcCorpus(Date.now()));
    llm = await startFakeChatServer({ model: 'hyde-model', respond: () => HYPOTHETICAL });
    const client = new OpenAiCompatibleChatClient({
      baseUrl: llm.baseUrl,
      model: 'hyde-model',
      maxAttempts: 1,
      timeoutMs: 2_000,
    });
    service = new RecallService(store, embedder, { hyde: client });
  });

  afterAll(async () => {
    await llm.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const recall = (query: string) =>
    service.recall({ ...scope, query, k: 5, tier: 'memories', phase: 'implement' });

  it('should search again with the hypothetical memory when the query alone finds too little', async () => {
    const asked = llm.requests.length;
    const answer = await recall('what keeps running out when traffic spikes');
    expect(llm.requests.length).toBe(asked + 1);
    expect(JSON.stringify(llm.requests[asked].body)).toContain(
      'would perfectly answer: \\"what keeps running out when traffic spikes\\"',
    );
    expect(answer.hyde).toEqual({ hypothetical: HYPOTHETICAL });
    expect(answer.results[0].id).toBe('inj-elsewhere');
    expect(answer.timings.hydeMs).toBeGreaterThan(0);
  });

  it('should not ask the model when the query finds enough strong results', async () => {
    const asked = llm.requests.length;
    const answer = await recall('auth token refresh logout session mutex');
    expect(llm.requests.length).toBe(asked);
    expect(answer.hyde).toBeNull();
    expect(answer.results.length).toBeGreaterThanOrEqual(3);
  });

  it('should answer with the query alone when the model fails', async () => {
    llm.next({ kind: 'status', status: 500, body: { error: { message: 'overloaded' } } });
    const answer = await recall('what keeps running out when traffic spikes');
    expect(answer.hyde).toBeNull();
    expect(answer.results.map((r) => r.id)).not.toContain('inj-elsewhere');
  });
});
