import { status } from '@grpc/grpc-js';
import { CONTRACT_FILES } from '../../../../libs/core/src/ports/testing/observer-graph.contract';
import { expect, it } from 'vitest';
import { call } from './recall-rpc-client';
import { SCOPE, type RecallRpcsContext, type ScoredMemoryMessage } from './recall-rpcs.context';
import { AUTH_FILE, CURRENT_SESSION } from './rpc-corpus';
import { TENANT } from './records';

// The recall rpcs suite, what an agent is given about its work: the memories about a file, a
// session's context, workflow recipes, the impact of a change. Test support only.

/** InjectForFile, BuildContext and GetWorkflowRecipe. */
export function agentContextCases(t: RecallRpcsContext): void {
  it('InjectForFile: proven warnings about the file, never stale, never another tenant', async () => {
    const { response } = await call<{ memories: ScoredMemoryMessage[]; rendered: string }>(
      t.client,
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
    const limited = await call<{ memories: unknown[] }>(t.client, 'InjectForFile', {
      scope: SCOPE,
      file_path: AUTH_FILE,
      limit: 1,
    });
    expect(limited.response!.memories).toHaveLength(1);
    const globex = await call<{ memories: ScoredMemoryMessage[] }>(
      t.client,
      'InjectForFile',
      { scope: SCOPE, file_path: AUTH_FILE },
      'token-globex',
    );
    expect(globex.response!.memories.map((m) => m.memory.memory_id)).toEqual(['globex-gotcha']);
    const write = await call<{ memories: unknown[]; rendered: string }>(t.client, 'InjectForFile', {
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
    }>(t.client, 'BuildContext', {
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
      t.client,
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
    }>(t.client, 'GetWorkflowRecipe', {
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
}

/** AnalyzeImpact, on the graph contract's sessions (contractGraph). */
export function impactCases(t: RecallRpcsContext): void {
  it('AnalyzeImpact: co-access dependents hop by hop, and the memories about them', async () => {
    const { response } = await call<{
      file_path: string;
      direct_dependents: { path: string; depth: number; weight: number; edge_types: string[] }[];
      transitive_dependents: { path: string; depth: number; weight: number }[];
      memories: ScoredMemoryMessage[];
      e2e_observations: ScoredMemoryMessage[];
      impact_score: number;
    }>(t.client, 'AnalyzeImpact', { scope: SCOPE, file_path: `./${CONTRACT_FILES.B}` });
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
    const shallow = await call<{ transitive_dependents: unknown[] }>(t.client, 'AnalyzeImpact', {
      scope: SCOPE,
      file_path: CONTRACT_FILES.B,
      max_depth: 1,
    });
    expect(shallow.response!.transitive_dependents).toEqual([]);
    const bad = await call(t.client, 'AnalyzeImpact', {
      scope: SCOPE,
      file_path: 'a.ts',
      max_depth: 9,
    });
    expect(bad.error?.details).toMatch(/^max_depth: /);
    const escape = await call(t.client, 'AnalyzeImpact', {
      scope: SCOPE,
      file_path: '../etc/passwd',
    });
    expect(escape.error?.code).toBe(status.INVALID_ARGUMENT);
    const globex = await call<{ direct_dependents: unknown[]; memories: unknown[] }>(
      t.client,
      'AnalyzeImpact',
      { scope: SCOPE, file_path: CONTRACT_FILES.B },
      'token-globex',
    );
    expect(globex.response).toMatchObject({ direct_dependents: [], memories: [] });
  });
}
