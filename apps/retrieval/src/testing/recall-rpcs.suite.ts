import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import type { Memory, Typed } from '@engram/contracts';
import { observerSettings, tenantTokens } from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import {
  CONTRACT_FILES,
  contractGraphBatches,
} from '../../../../libs/core/src/ports/testing/observer-graph.contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recallGrpcClient } from '../recall-grpc-client';
import { AUTH_FILE, CURRENT_SESSION, OTHER_TENANT } from './rpc-corpus';
import { expectReviewQueue } from './review-queue-rpc.checks';
import { expectSessionNotes } from './session-notes-rpc.checks';
import { PROJECT, TENANT } from './records';

// The rpcs beside Recall, over real gRPC (@grpc/grpc-js, snake_case as a client of any language
// sees them), against a server with `rpcCorpus` indexed: the embedded SQLite server in the unit
// tier, Elasticsearch in the integration tier. Test support only.

export const RPC_TOKENS = tenantTokens({
  'token-acme': { tenants: [TENANT], role: 'admin' },
  'token-globex': { tenants: [OTHER_TENANT], role: 'admin' },
  'token-acme-read': { tenants: [TENANT], role: 'read' },
});

export interface RecallRpcsFixture {
  /** host:port of a server with the corpus indexed, tokens RPC_TOKENS. */
  url: string;
  /** At least `count` records Remember published on a contract topic (read back from the log). */
  published(topic: 'agent.lifecycle.v1' | 'memory.memories.v1', count: number): Promise<Typed[]>;
  /** The keys of the tombstones Feedback published on memory.memories.v1, in no given order. */
  tombstones(topic: 'memory.memories.v1'): Promise<string[]>;
  /** Indexes a memory as the log's consumer does, searchable once it resolves (a validation). */
  indexMemory(memory: Memory): Promise<void>;
  close(): Promise<void>;
}

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

type Unary = (
  request: object,
  metadata: Metadata,
  callback: (error: ServiceError | null, response?: unknown) => void,
) => void;

export type RecallClient = Record<string, Unary> & { close(): void };

export function recallClient(url: string): RecallClient {
  return recallGrpcClient<RecallClient>(url);
}

/** A unary call with a bearer token; resolves with the response or the ServiceError. */
export function call<R = Record<string, unknown>>(
  client: RecallClient,
  rpc: string,
  request: object,
  token = 'token-acme',
): Promise<{ response?: R; error?: ServiceError }> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    client[rpc](request, metadata, (error, response) =>
      resolve(error ? { error } : { response: response as R }),
    );
  });
}

const SCOPE = { project_id: PROJECT };

interface ScoredMemoryMessage {
  memory: { memory_id: string; type: string; stale: boolean };
  scores: { final_score: number } | null;
  provenance: { tenant_id: string; memory_id: string };
}

interface EpisodeMessage {
  episode: { episode_id: string; started_at_ms: number; parent_episode_id: string };
  scores: { relevance: number } | null;
  provenance: { tenant_id: string; episode_ids: string[] };
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

    it('InjectForFile: proven warnings about the file, never stale, never another tenant', async () => {
      const { response } = await call<{ memories: ScoredMemoryMessage[]; rendered: string }>(
        client,
        'InjectForFile',
        { scope: SCOPE, file_path: `/home/dev/api/${AUTH_FILE}`, tool_name: 'Read' },
      );
      const ids = response!.memories.map((m) => m.memory.memory_id);
      expect(new Set(ids)).toEqual(new Set(['inj-gotcha', 'inj-error']));
      expect(response!.memories.every((m) => !m.memory.stale)).toBe(true);
      expect(response!.memories[0].provenance.tenant_id).toBe(TENANT);
      expect(response!.memories[0].scores!.final_score).toBeGreaterThan(0);
      expect(response!.rendered).toContain('**Memory context for this file:**');
      expect(response!.rendered).toContain('[inj-gotc]');
      const limited = await call<{ memories: unknown[] }>(client, 'InjectForFile', {
        scope: SCOPE,
        file_path: AUTH_FILE,
        limit: 1,
      });
      expect(limited.response!.memories).toHaveLength(1);
      const globex = await call<{ memories: ScoredMemoryMessage[] }>(
        client,
        'InjectForFile',
        { scope: SCOPE, file_path: AUTH_FILE },
        'token-globex',
      );
      expect(globex.response!.memories.map((m) => m.memory.memory_id)).toEqual(['globex-gotcha']);
      const write = await call<{ memories: unknown[]; rendered: string }>(client, 'InjectForFile', {
        scope: SCOPE,
        file_path: AUTH_FILE,
        tool_name: 'Bash',
      });
      expect(write.response).toEqual({ memories: [], rendered: '' });
    });

    it('BuildContext: the current thread, "You were asking about" continuity, citations, budget', async () => {
      const { response } = await call<{
        items: { citation_id: string; kind: string; text: string; tokens: number }[];
        rendered: string;
        tokens_used: number;
        truncated: boolean;
        thread_id: string;
      }>(client, 'BuildContext', {
        scope: SCOPE,
        session_id: CURRENT_SESSION,
        phase: 'UNIVERSAL_PHASE_IMPLEMENT',
        token_budget: 2000,
      });
      const context = response!;
      expect(context.thread_id).toBe('thread-logout');
      const kinds = (kind: string) => context.items.filter((i) => i.kind === kind);
      expect(kinds('CONTEXT_ITEM_KIND_CURRENT_THREAD').map((i) => i.citation_id)).toEqual([
        'turn-p-now-2',
        'turn-p-now-3',
      ]);
      const continuity = kinds('CONTEXT_ITEM_KIND_CROSS_THREAD_EPISODE');
      expect(continuity.map((i) => i.citation_id)).toContain('ep-e-3');
      expect(continuity.every((i) => i.text.startsWith('You were asking about'))).toBe(true);
      // the session's own work state, not the newer one of another session (issue #20)
      expect(kinds('CONTEXT_ITEM_KIND_WORK_STATE').map((i) => i.citation_id)).toEqual([
        'ws-work-sta',
      ]);
      expect(context.rendered).not.toContain('billing tables');
      const memories = kinds('CONTEXT_ITEM_KIND_MEMORY').map((i) => i.citation_id);
      expect(memories).toContain('mem-inj-gotc');
      expect(memories).not.toContain('mem-inj-stal');
      expect(context.rendered).toContain('[turn-p-now-3] User: is it the logout mutex again?');
      expect(context.rendered).not.toContain('globex');
      expect(context.tokens_used).toBeLessThanOrEqual(2000);
      expect(context.tokens_used).toBeGreaterThanOrEqual(
        context.items.reduce((sum, item) => sum + item.tokens, 0),
      );
      const tight = await call<{ items: unknown[]; truncated: boolean; tokens_used: number }>(
        client,
        'BuildContext',
        { scope: SCOPE, session_id: CURRENT_SESSION, token_budget: 40 },
      );
      expect(tight.response!.truncated).toBe(true);
      expect(tight.response!.tokens_used).toBeLessThanOrEqual(40);
      expect(tight.response!.items.length).toBeLessThan(context.items.length);
    });

    it('GetWorkflowRecipe: steps in order, never a stale recipe', async () => {
      const { response } = await call<{
        recipes: (ScoredMemoryMessage & {
          task_pattern: string;
          steps: {
            order: number;
            description: string;
            canonical_file: string;
            canonical_line: number;
          }[];
          success_count: number;
        })[];
      }>(client, 'GetWorkflowRecipe', {
        scope: SCOPE,
        task_description: 'add a new REST endpoint',
      });
      expect(response!.recipes.map((r) => r.memory.memory_id)).toEqual(['recipe-endpoint']);
      const [recipe] = response!.recipes;
      expect(recipe.task_pattern).toBe('add a new REST endpoint');
      expect(recipe.success_count).toBe(4);
      expect(recipe.steps.map((s) => [s.order, s.canonical_file, s.canonical_line])).toEqual([
        [1, 'src/handlers/x.ts', 0],
        [2, 'src/routes/index.ts', 12],
      ]);
    });

    it('GetEpisodeSequence and ReplayTopic: the topic in chronological order, scored', async () => {
      const { response } = await call<{ episodes: EpisodeMessage[] }>(
        client,
        'GetEpisodeSequence',
        { scope: SCOPE, topic: 'auth token refresh logout race', min_relevance: 0.3 },
      );
      const ids = response!.episodes.map((e) => e.episode.episode_id);
      expect(ids.filter((id) => ['e-1', 'e-2', 'e-3'].includes(id))).toEqual(['e-1', 'e-2', 'e-3']);
      expect(ids).not.toContain('e-css');
      expect(ids).not.toContain('globex-episode');
      const starts = response!.episodes.map((e) => e.episode.started_at_ms);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      expect(response!.episodes.every((e) => e.scores!.relevance > 0.3)).toBe(true);
      const replay = await call<{ episodes: EpisodeMessage[]; rendered: string }>(
        client,
        'ReplayTopic',
        { scope: SCOPE, topic: 'auth token refresh logout race', limit: 2 },
      );
      expect(replay.response!.episodes.length).toBeLessThanOrEqual(2);
      expect(replay.response!.rendered).toMatch(
        /^📜 Episode history for 'auth token refresh logout race'/,
      );
      const none = await call<{ rendered: string }>(client, 'ReplayTopic', {
        scope: SCOPE,
        topic: 'zanzibar quarterly roadmap',
      });
      expect(none.response!.rendered).toBe(
        'No episodes found for topic: zanzibar quarterly roadmap',
      );
    });

    it('GetEpisodeChain: root first, cycles detected, other tenants invisible', async () => {
      const { response } = await call<{ episodes: EpisodeMessage[]; cycle_detected: boolean }>(
        client,
        'GetEpisodeChain',
        { scope: SCOPE, episode_id: 'e-3' },
      );
      expect(response!.episodes.map((e) => e.episode.episode_id)).toEqual(['e-1', 'e-2', 'e-3']);
      expect(response!.cycle_detected).toBe(false);
      expect(response!.episodes[2].provenance.episode_ids).toEqual(['e-3']);
      const cycle = await call<{ episodes: EpisodeMessage[]; cycle_detected: boolean }>(
        client,
        'GetEpisodeChain',
        { scope: SCOPE, episode_id: 'cycle-a' },
      );
      expect(cycle.response!.cycle_detected).toBe(true);
      const foreign = await call<{ episodes: unknown[] }>(
        client,
        'GetEpisodeChain',
        { scope: SCOPE, episode_id: 'e-3' },
        'token-globex',
      );
      expect(foreign.response!.episodes).toEqual([]);
    });

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

    it("Remember: an agent's note is published for validation; a person's lesson is a memory at once", async () => {
      const note = await call<{ event_id: string; memory_id: string; accepted: boolean }>(
        client,
        'Remember',
        {
          scope: SCOPE,
          session_id: CURRENT_SESSION,
          agent_id: 'claude-code',
          text: 'Never call refresh() outside the mutex',
          type: 'gotcha',
          related_files: [AUTH_FILE],
        },
      );
      expect(note.response).toMatchObject({ accepted: true, memory_id: '' });
      expect(note.response!.event_id).toMatch(/^[0-9a-f-]{36}$/);
      const taught = await call<{ event_id: string; memory_id: string; accepted: boolean }>(
        client,
        'Remember',
        { scope: SCOPE, user_id: 'alice', text: 'Deploys to the zanzibar cluster need the VPN' },
      );
      expect(taught.response!.memory_id).toMatch(/^[0-9a-f-]{36}$/);
      const recalled = await call<{
        results: { memory?: { memory_id: string; source: string; user_verified: boolean } }[];
      }>(client, 'Recall', { scope: SCOPE, query: 'zanzibar cluster VPN', tier: 'TIER_MEMORIES' });
      expect(recalled.response!.results[0]?.memory).toMatchObject({
        memory_id: taught.response!.memory_id,
        source: 'user_taught',
        user_verified: true,
      });
      const lifecycle = await fx.published('agent.lifecycle.v1', 2);
      expect(lifecycle.map((r) => r.eventId)).toEqual(
        expect.arrayContaining([note.response!.event_id, taught.response!.event_id]),
      );
      expect(lifecycle.find((r) => r.eventId === note.response!.event_id)).toMatchObject({
        type: 'RememberRequested',
        tenantId: TENANT,
        agentId: 'claude-code',
        memoryType: 'gotcha',
        relatedFiles: [AUTH_FILE],
      });
      const memories = await fx.published('memory.memories.v1', 1);
      expect(memories.map((r) => (r as Typed<'Memory'>).memoryId)).toContain(
        taught.response!.memory_id,
      );
      const again = await call<{ event_id: string }>(client, 'Remember', {
        scope: SCOPE,
        user_id: 'alice',
        text: 'Deploys to the zanzibar cluster need the VPN',
      });
      expect(again.response!.event_id).toBe(taught.response!.event_id); // deterministic ids
      const refused: [object, string][] = [
        [{ scope: SCOPE, agent_id: 'a' }, 'text'],
        [{ scope: SCOPE, agent_id: 'a', text: 'x', type: 'nonsense' }, 'type'],
        [{ scope: SCOPE, text: 'x' }, 'agent_id'],
      ];
      for (const [request, field] of refused) {
        const { error } = await call(client, 'Remember', request);
        expect(error?.code, field).toBe(status.INVALID_ARGUMENT);
        expect(error?.details).toMatch(new RegExp(`^${field}: `));
      }
      const denied = await call(client, 'Remember', {
        scope: { ...SCOPE, tenant_id: OTHER_TENANT },
        agent_id: 'a',
        text: 'x',
      });
      expect(denied.error?.code).toBe(status.PERMISSION_DENIED);
    });

    it('Remember in a session: the note is recalled there at once, nowhere else, and once validated it is the memory', () =>
      expectSessionNotes(
        (rpc, request, token) => call(client, rpc, request, token),
        (memory) => fx.indexMemory(memory),
      ));

    it('AnalyzeImpact: co-access dependents hop by hop, and the memories about them', async () => {
      const { response } = await call<{
        file_path: string;
        direct_dependents: { path: string; depth: number; weight: number; edge_types: string[] }[];
        transitive_dependents: { path: string; depth: number; weight: number }[];
        memories: ScoredMemoryMessage[];
        e2e_observations: ScoredMemoryMessage[];
        impact_score: number;
      }>(client, 'AnalyzeImpact', { scope: SCOPE, file_path: `./${CONTRACT_FILES.B}` });
      const impact = response!;
      expect(impact.file_path).toBe(CONTRACT_FILES.B);
      expect(impact.direct_dependents).toEqual([
        {
          path: CONTRACT_FILES.A,
          depth: 1,
          weight: expect.closeTo(2 / 3, 9) as number,
          edge_types: ['co_accessed'],
        },
      ]);
      expect(impact.transitive_dependents).toMatchObject([{ path: CONTRACT_FILES.C, depth: 2 }]);
      expect(impact.transitive_dependents[0].weight).toBeCloseTo(2 / 9, 9);
      expect(impact.memories.map((m) => m.memory.memory_id)).toEqual(['inj-elsewhere']);
      expect(impact.e2e_observations.map((m) => m.memory.memory_id)).toEqual(['e2e-login']);
      expect(impact.impact_score).toBeCloseTo(1 - (1 / 3) * (7 / 9), 9);
      const shallow = await call<{ transitive_dependents: unknown[] }>(client, 'AnalyzeImpact', {
        scope: SCOPE,
        file_path: CONTRACT_FILES.B,
        max_depth: 1,
      });
      expect(shallow.response!.transitive_dependents).toEqual([]);
      const bad = await call(client, 'AnalyzeImpact', {
        scope: SCOPE,
        file_path: 'a.ts',
        max_depth: 9,
      });
      expect(bad.error?.details).toMatch(/^max_depth: /);
      const escape = await call(client, 'AnalyzeImpact', {
        scope: SCOPE,
        file_path: '../etc/passwd',
      });
      expect(escape.error?.code).toBe(status.INVALID_ARGUMENT);
      const globex = await call<{ direct_dependents: unknown[]; memories: unknown[] }>(
        client,
        'AnalyzeImpact',
        { scope: SCOPE, file_path: CONTRACT_FILES.B },
        'token-globex',
      );
      expect(globex.response).toMatchObject({ direct_dependents: [], memories: [] });
    });

    it('Feedback: confirm, flag wrong and outdated update the memory at once', async () => {
      type Answer = { memory_id: string; applied: boolean; confidence: number; deleted: boolean };
      const feedback = (request: object, token?: string) =>
        call<Answer>(client, 'Feedback', { scope: SCOPE, ...request }, token);
      const injected = async () => {
        const { response } = await call<{ memories: ScoredMemoryMessage[] }>(
          client,
          'InjectForFile',
          { scope: SCOPE, file_path: AUTH_FILE },
        );
        return response!.memories.map((m) => m.memory.memory_id).sort();
      };
      expect(await injected()).toEqual(['inj-error', 'inj-gotcha']);
      const confirmed = await feedback({
        memory_id: 'inj-unproven',
        action: 'FEEDBACK_ACTION_CONFIRM',
        user_id: 'alice',
      });
      expect(confirmed.response).toEqual({
        memory_id: 'inj-unproven',
        applied: true,
        confidence: 0.9,
        deleted: false,
      });
      const flagged = await feedback({
        memory_id: 'inj-gotcha',
        action: 'FEEDBACK_ACTION_FLAG_WRONG',
      });
      expect(flagged.response!.confidence).toBeCloseTo(0.45, 9);
      await feedback({
        memory_id: 'inj-error',
        action: 'FEEDBACK_ACTION_CORRECT',
        reason: 'CORRECTION_REASON_OUTDATED',
      });
      // Proven by a person now; wrong; no longer applies.
      expect(await injected()).toEqual(['inj-unproven']);
      const memories = (await fx.published('memory.memories.v1', 4)) as Typed<'Memory'>[];
      expect(memories.find((m) => m.memoryId === 'inj-gotcha')).toMatchObject({
        needsReview: true,
        userVerified: false,
      });
      const refused: [object, number, string][] = [
        [{ memory_id: 'inj-low' }, status.INVALID_ARGUMENT, 'action: '],
        [
          {
            memory_id: 'inj-low',
            action: 'FEEDBACK_ACTION_CORRECT',
            reason: 'CORRECTION_REASON_INACCURATE',
          },
          status.INVALID_ARGUMENT,
          'corrected_content: ',
        ],
        [
          { memory_id: 'nope', action: 'FEEDBACK_ACTION_CONFIRM' },
          status.INVALID_ARGUMENT,
          'memory_id: ',
        ],
      ];
      for (const [request, code, field] of refused) {
        const { error } = await feedback(request);
        expect(error?.code, JSON.stringify(request)).toBe(code);
        expect(error?.details).toMatch(new RegExp(`^${field}`));
      }
      const foreign = await feedback(
        { memory_id: 'inj-decision', action: 'FEEDBACK_ACTION_CONFIRM' },
        'token-globex',
      );
      expect(foreign.error?.details).toMatch(/^memory_id: no memory/);
    });

    it('Feedback: delete and correct-as-duplicate delete the memory: a tombstone, gone from recall', async () => {
      type Answer = { memory_id: string; applied: boolean; confidence: number; deleted: boolean };
      const feedback = (request: object, token?: string) =>
        call<Answer>(client, 'Feedback', { scope: SCOPE, ...request }, token);
      const recalled = async (query: string) => {
        const { response } = await call<{ results: { memory?: { memory_id: string } }[] }>(
          client,
          'Recall',
          { scope: SCOPE, query, tier: 'TIER_MEMORIES' },
        );
        return response!.results.map((r) => r.memory?.memory_id);
      };
      const DELETE = 'FEEDBACK_ACTION_DELETE';
      expect(await recalled('Polling the token')).toContain('inj-low');
      // Another tenant's caller does not find it, and deletes nothing.
      const foreign = await feedback({ memory_id: 'inj-low', action: DELETE }, 'token-globex');
      expect(foreign.error?.code).toBe(status.INVALID_ARGUMENT);
      expect(foreign.error?.details).toMatch(/^memory_id: no memory inj-low/);
      expect(await recalled('Polling the token')).toContain('inj-low');

      const deleted = await feedback({ memory_id: 'inj-low', action: DELETE, user_id: 'alice' });
      expect(deleted.response).toEqual({
        memory_id: 'inj-low',
        applied: true,
        confidence: 0,
        deleted: true,
      });
      expect(await recalled('Polling the token')).not.toContain('inj-low');
      const again = await feedback({ memory_id: 'inj-low', action: DELETE });
      expect(again.error?.code).toBe(status.INVALID_ARGUMENT);
      expect(again.error?.details).toMatch(/^memory_id: no memory inj-low in this project/);

      const duplicate = (duplicateOf: string) =>
        feedback({
          memory_id: 'inj-stale',
          action: 'FEEDBACK_ACTION_CORRECT',
          reason: 'CORRECTION_REASON_DUPLICATE',
          duplicate_of_memory_id: duplicateOf,
        });
      const query = 'old refresh helper must be imported first';
      expect(await recalled(query)).toContain('inj-stale');
      // A duplicate of a memory the project does not have (another tenant's) deletes nothing.
      const ofForeign = await duplicate('globex-gotcha');
      expect(ofForeign.error?.code).toBe(status.INVALID_ARGUMENT);
      expect(ofForeign.error?.details).toMatch(/^duplicate_of_memory_id: no memory globex-gotcha/);
      expect(await recalled(query)).toContain('inj-stale');
      expect((await duplicate('inj-gotcha')).response).toMatchObject({
        memory_id: 'inj-stale',
        deleted: true,
      });
      expect(await recalled(query)).not.toContain('inj-stale');
      expect((await fx.tombstones('memory.memories.v1')).sort()).toEqual(['inj-low', 'inj-stale']);
    });

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
