import { status } from '@grpc/grpc-js';
import { observerSettings, tenantTokens } from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import {
  CONTRACT_FILES,
  contractGraphBatches,
} from '../../../../libs/core/src/ports/testing/observer-graph.contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, recallClient, type RecallClient } from './recall-rpc-client';
import { SCOPE, type RecallRpcsContext, type RecallRpcsFixture } from './recall-rpcs.context';
import { agentContextCases, impactCases } from './recall-rpcs.context-cases';
import { episodeHistoryCases } from './recall-rpcs.episode-cases';
import { feedbackCases, rememberCases } from './recall-rpcs.write-cases';
import { AUTH_FILE, CURRENT_SESSION, OTHER_TENANT } from './rpc-corpus';
import { expectReviewQueue } from './review-queue-rpc.checks';
import { PROJECT, TENANT } from './records';

// The rpcs beside Recall, over real gRPC (@grpc/grpc-js, snake_case as a client of any language
// sees them), against a server with `rpcCorpus` indexed: the embedded SQLite server in the unit
// tier, Elasticsearch in the integration tier. The cases live in recall-rpcs.*-cases.ts by theme;
// this file runs them in one order, on one server. Test support only.

// What the server modes' suites import with the suite.
export { call, recallClient, type RecallClient } from './recall-rpc-client';
export type { RecallRpcsFixture } from './recall-rpcs.context';

export const RPC_TOKENS = tenantTokens({
  'token-acme': { tenants: [TENANT], role: 'admin' },
  'token-globex': { tenants: [OTHER_TENANT], role: 'admin' },
  'token-acme-read': { tenants: [TENANT], role: 'read' },
});

/**
 * The observer graph GetFileNeighbors and AnalyzeImpact read, seeded with the graph contract's
 * sessions (token.ts–session.ts 2/3, token.ts–pool.ts 1/3): the embedded adapter, in `dataDir`.
 */
export async function contractGraph(dataDir: string): Promise<SqliteObserverGraph> {
  const graph = SqliteObserverGraph.open({ dataDir, rule: observerSettings() });
  for (const batch of contractGraphBatches({ tenantId: TENANT, projectId: PROJECT }, 'rpcs')) {
    await graph.write(batch);
  }
  return graph;
}

export function describeRecallRpcs(name: string, makeFixture: () => Promise<RecallRpcsFixture>) {
  describe(`recall rpcs over gRPC: ${name}`, () => {
    let fx: RecallRpcsFixture;
    let client: RecallClient;

    beforeAll(async () => {
      fx = await makeFixture();
      client = recallClient(fx.url);
    });
    afterAll(async () => {
      client?.close();
      await fx?.close();
    });
    const t: RecallRpcsContext = {
      get fx() {
        return fx;
      },
      get client() {
        return client;
      },
    };

    // In this order: the writes change what later cases read (Feedback flags and deletes).
    agentContextCases(t);
    episodeHistoryCases(t);

    it('should refuse bad requests naming the field, and another tenant, on every new rpc', async () => {
      const invalid: [string, object, string][] = [
        ['InjectForFile', { scope: SCOPE }, 'file_path'],
        ['InjectForFile', { scope: SCOPE, file_path: AUTH_FILE, limit: 1000 }, 'limit'],
        ['BuildContext', { scope: SCOPE }, 'session_id'],
        ['BuildContext', { session_id: CURRENT_SESSION }, 'scope.project_id'],
        ['GetWorkflowRecipe', { scope: SCOPE }, 'task_description'],
        ['GetEpisodeSequence', { scope: SCOPE }, 'topic'],
        ['GetEpisodeSequence', { scope: SCOPE, topic: 'auth', min_relevance: 2 }, 'min_relevance'],
        ['ReplayTopic', { scope: SCOPE }, 'topic'],
        ['GetEpisodeChain', { scope: SCOPE }, 'episode_id'],
      ];
      for (const [rpc, request, field] of invalid) {
        const { error } = await call(client, rpc, request);
        expect(error?.code, `${rpc} ${field}`).toBe(status.INVALID_ARGUMENT);
        expect(error?.details, rpc).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
      }
      const rpcs: [string, object][] = [
        ['InjectForFile', { file_path: AUTH_FILE }],
        ['BuildContext', { session_id: CURRENT_SESSION }],
        ['GetWorkflowRecipe', { task_description: 'endpoint' }],
        ['GetEpisodeSequence', { topic: 'auth' }],
        ['ReplayTopic', { topic: 'auth' }],
        ['GetEpisodeChain', { episode_id: 'e-3' }],
        ['AnalyzeImpact', { file_path: AUTH_FILE }],
        ['Feedback', { memory_id: 'inj-gotcha', action: 'FEEDBACK_ACTION_CONFIRM' }],
      ];
      for (const [rpc, request] of rpcs) {
        const scope = { ...SCOPE, tenant_id: OTHER_TENANT };
        const denied = await call(client, rpc, { ...request, scope });
        expect(denied.error?.code, rpc).toBe(status.PERMISSION_DENIED);
        const anonymous = await call(client, rpc, { ...request, scope: SCOPE }, 'no-such-token');
        expect(anonymous.error?.code, rpc).toBe(status.UNAUTHENTICATED);
      }
    });

    it('ListForReview: the flagged, unconfirmed memories of the project, paged, by tenant', () =>
      expectReviewQueue((rpc, request, token) => call(client, rpc, request, token)));

    rememberCases(t);
    impactCases(t);
    feedbackCases(t);

    it('should measure the rpcs over gRPC (reported, not asserted)', async () => {
      const requests: [string, object][] = [
        ['InjectForFile', { scope: SCOPE, file_path: AUTH_FILE, tool_name: 'Read' }],
        ['BuildContext', { scope: SCOPE, session_id: CURRENT_SESSION }],
        ['GetEpisodeSequence', { scope: SCOPE, topic: 'auth token refresh' }],
        ['GetEpisodeChain', { scope: SCOPE, episode_id: 'e-3' }],
        ['AnalyzeImpact', { scope: SCOPE, file_path: CONTRACT_FILES.B }],
        // SessionStart's count: one page of 100.
        ['ListForReview', { scope: SCOPE, limit: 100 }],
      ];
      const lines: string[] = [];
      for (const [rpc, request] of requests) {
        const times: number[] = [];
        for (let i = 0; i < 20; i += 1) {
          const started = performance.now();
          const { error } = await call(client, rpc, request);
          times.push(performance.now() - started);
          expect(error).toBeUndefined();
        }
        times.sort((a, b) => a - b);
        lines.push(`${rpc} p50 ${times[9].toFixed(1)} ms, p95 ${times[18].toFixed(1)} ms`);
      }
      console.log(`[recall rpcs: ${name}] ${lines.join('; ')}`);
    });
  });
}
