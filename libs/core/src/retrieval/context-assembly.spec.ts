import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import { assembleContext, type ContextAssemblyInput } from './context-assembly';
import { rankByPriors } from './rank-memories';
import { rankingConfig } from './ranking-config';
import { InvalidRecallRequestError } from './retrieval-errors';
import { DAY, episode, memory, NOW, SCOPE, turn } from './testing/fixtures';
import { estimateTokens } from './token-estimate';
import { workStateAnchor } from './work-state-scope';

const ranked = (memories: Parameters<typeof rankByPriors>[0]['memories']) =>
  rankByPriors({ memories, phase: 'implement', now: NOW }, DEFAULT_RANKING_CONFIG);

function baseInput(overrides: Partial<ContextAssemblyInput> = {}): ContextAssemblyInput {
  return {
    scope: SCOPE,
    threadId: 'thread-now',
    channel: 'implicit',
    currentThread: [
      turn({ eventId: 't2', promptId: 2, timestamp: NOW - 1_000, text: 'What about next week?' }),
      turn({ eventId: 't3', promptId: 3, timestamp: NOW, text: 'And on Thursday?' }),
    ],
    linkedEpisodes: [
      episode({
        episodeId: 'ep-weather-1',
        threadId: 'thread-old',
        intent: 'weather in New York',
        endedAt: Date.UTC(2026, 2, 1, 10, 15),
        summary: 'Sunny, high 72°F.',
      }),
    ],
    memories: ranked([
      memory({
        memoryId: 'mem-gotcha-1',
        memoryType: 'gotcha',
        content: 'The forecast API caches for 10 min.',
      }),
      memory({
        memoryId: 'mem-ws-dup',
        memoryType: 'work_state',
        content: 'a work state found by search',
      }),
    ]),
    workStates: [
      memory({
        memoryId: 'ws-old-0001',
        memoryType: 'work_state',
        sessionId: 'session-2',
        content: 'old state',
        timestamp: NOW - 3 * DAY,
      }),
      memory({
        memoryId: 'ws-new-0001',
        memoryType: 'work_state',
        sessionId: 'session-2',
        content: 'step 3 of 5: wiring the cache',
        timestamp: NOW - DAY,
        workUnitRef: { methodology: 'native', hierarchy: ['spec_042'], label: 'Spec 042' },
      }),
      memory({
        memoryId: 'ws-stale-01',
        memoryType: 'work_state',
        sessionId: 'session-2',
        content: 'stale state',
        timestamp: NOW,
        staleAt: NOW,
      }),
      // another session's, newer than all: not this session's work (issue #20)
      memory({
        memoryId: 'ws-other-01',
        memoryType: 'work_state',
        sessionId: 'session-9',
        content: 'someone else is halfway through a migration',
        timestamp: NOW - 60_000,
      }),
    ],
    workStateAnchor: workStateAnchor(
      'session-2',
      { threadId: 'thread-now', linkedEpisodeIds: [] },
      [],
    ),
    recipes: ranked([
      memory({
        memoryId: 'recipe-cache-1',
        memoryType: 'workflow_recipe',
        content: 'adding a cached endpoint',
        workflowRecipe: {
          taskPattern: 'adding a cached endpoint',
          steps: [
            {
              order: 2,
              description: 'register the route',
              canonicalFile: 'src/routes.ts',
              canonicalLine: null,
            },
            {
              order: 1,
              description: 'write the handler',
              canonicalFile: null,
              canonicalLine: null,
            },
          ],
          lastValidatedAt: NOW - DAY,
          successCount: 3,
        },
      }),
    ]),
    tokenBudget: 1_000,
    ...overrides,
  };
}

describe('assembleContext', () => {
  it('should assemble every kind, cited, with the "You were asking about" continuity line', () => {
    const context = assembleContext(baseInput(), DEFAULT_RANKING_CONFIG);
    expect(context.items.map((item) => [item.citationId, item.kind])).toEqual([
      ['ep-ep-weath', 'cross_thread_episode'],
      ['ws-ws-new-0', 'work_state'],
      ['recipe-recipe-c', 'workflow_recipe'],
      ['mem-mem-gotc', 'memory'],
      ['turn-t2', 'current_thread'],
      ['turn-t3', 'current_thread'],
    ]);
    expect(context.rendered).toBe(
      [
        '## Earlier related conversations',
        '[ep-ep-weath] You were asking about weather in New York (2026-03-01). Sunny, high 72°F.',
        '',
        '## Where the work stands',
        '[ws-ws-new-0] Work state (Spec 042): step 3 of 5: wiring the cache',
        '',
        '## Known workflow recipes',
        '[recipe-recipe-c] Recipe: adding a cached endpoint (used 3× successfully)',
        '  1. write the handler',
        '  2. register the route (see src/routes.ts)',
        '',
        '## Relevant memories',
        '[mem-mem-gotc] gotcha: The forecast API caches for 10 min.',
        '',
        '## Current thread',
        '[turn-t2] User: What about next week?',
        '[turn-t3] User: And on Thursday?',
      ].join('\n'),
    );
    expect(context.truncated).toBe(false);
    expect(context.items[0].provenance).toMatchObject({
      episodeIds: ['ep-weather-1'],
      promptIds: [1, 2, 3],
    });
    expect(context.items[5].provenance).toMatchObject({
      eventIds: ['t3'],
      promptIds: [3],
      sessionIds: ['session-2'],
    });
  });

  it('should count tokens as chars/4 per rendered piece, never underestimating the whole', () => {
    const context = assembleContext(baseInput(), DEFAULT_RANKING_CONFIG);
    const headers = 5; // one per non-empty section
    const itemTokens = context.items.reduce((sum, item) => sum + item.tokens, 0);
    expect(context.items[5].tokens).toBe(estimateTokens('[turn-t3] User: And on Thursday?\n')); // 33 chars → 9
    expect(context.items[5].tokens).toBe(9);
    expect(context.tokensUsed).toBeGreaterThan(itemTokens);
    expect(context.tokensUsed).toBeLessThanOrEqual(
      itemTokens + headers * estimateTokens('\n## Earlier related conversations\n'),
    );
    expect(estimateTokens(context.rendered)).toBeLessThanOrEqual(context.tokensUsed);
  });

  it('should pull no cross-thread episode for an explicit channel (the user chose the thread)', () => {
    const context = assembleContext(baseInput({ channel: 'explicit' }), DEFAULT_RANKING_CONFIG);
    expect(context.items.some((item) => item.kind === 'cross_thread_episode')).toBe(false);
    const configured = assembleContext(
      baseInput({ channel: 'explicit' }),
      rankingConfig({ context: { explicitChannelCrossThreadEpisodes: 1 } }),
    );
    expect(configured.items[0].text).toMatch(/^Earlier related episode: weather in New York/);
  });

  it('should keep a contiguous tail of the thread when the budget runs out', () => {
    // Each "[turn-tN] User: " is 16 chars; 27 x's + newline → 44 chars = 11 tokens; header 19 chars = 5.
    const x = 'x'.repeat(27);
    const currentThread = [
      turn({ eventId: 't1', promptId: 1, timestamp: NOW - 2_000, text: x }),
      turn({ eventId: 't2', promptId: 2, timestamp: NOW - 1_000, text: x.repeat(10) }),
      turn({ eventId: 't3', promptId: 3, timestamp: NOW, text: x }),
    ];
    const context = assembleContext(
      baseInput({
        currentThread,
        linkedEpisodes: [],
        memories: [],
        workStates: [],
        recipes: [],
        tokenBudget: 30,
      }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(context.items.map((item) => item.citationId)).toEqual(['turn-t3']);
    expect(context.tokensUsed).toBe(16);
    expect(context.omitted.map((o) => o.citationId)).toEqual(['turn-t2', 'turn-t1']); // t1 would fit, but not after a gap
    expect(context.truncated).toBe(true);

    const exact = assembleContext(
      baseInput({
        currentThread: [currentThread[0], { ...currentThread[1], text: x }, currentThread[2]],
        linkedEpisodes: [],
        memories: [],
        workStates: [],
        recipes: [],
        tokenBudget: 27,
      }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(exact.items.map((item) => item.citationId)).toEqual(['turn-t2', 'turn-t3']); // 5 + 11 + 11 = 27
    expect(exact.tokensUsed).toBe(27);
  });

  it('should give the budget by priority and let a smaller memory fill what a big one cannot', () => {
    const memories = ranked([
      memory({ memoryId: 'big', confidence: 1, content: 'y'.repeat(400) }),
      memory({ memoryId: 'small', confidence: 0.5, content: 'short' }),
    ]);
    const full = assembleContext(
      baseInput({ memories, tokenBudget: 1_000 }),
      DEFAULT_RANKING_CONFIG,
    );
    const withoutMemories =
      full.tokensUsed -
      full.items.filter((i) => i.kind === 'memory').reduce((s, i) => s + i.tokens, 0) -
      estimateTokens('\n## Relevant memories\n');
    const small = full.items.find((i) => i.citationId === 'mem-small');
    const budget =
      withoutMemories + estimateTokens('\n## Relevant memories\n') + (small?.tokens ?? 0);
    const context = assembleContext(
      baseInput({ memories, tokenBudget: budget }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(context.items.filter((i) => i.kind === 'memory').map((i) => i.citationId)).toEqual([
      'mem-small',
    ]);
    expect(context.omitted).toEqual([
      { kind: 'memory', citationId: 'mem-big', tokens: expect.any(Number) as number },
    ]);
    expect(context.tokensUsed).toBe(budget);
  });

  it('should clip a single oversized item instead of dropping it', () => {
    const context = assembleContext(
      baseInput({ currentThread: [turn({ eventId: 'log', text: 'z'.repeat(5_000) })] }),
      rankingConfig({ context: { maxItemTokens: 10 } }),
    );
    const item = context.items.find((i) => i.citationId === 'turn-log');
    expect(item?.clipped).toBe(true);
    expect(item?.text).toBe(`${'User: '}${'z'.repeat(33)}…`); // 40 chars = 10 tokens
  });

  it('should ignore turns of other threads or tenants and episodes of the current thread', () => {
    const context = assembleContext(
      baseInput({
        currentThread: [
          turn({ eventId: 'mine' }),
          turn({ eventId: 'other-thread', threadId: 'thread-x' }),
          turn({ eventId: 'other-tenant', tenantId: 'tenant-b' }),
        ],
        linkedEpisodes: [
          episode({ episodeId: 'same-thread', threadId: 'thread-now' }),
          episode({ episodeId: 'foreign', projectId: 'repo-b' }),
        ],
      }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(
      context.items.filter((i) => i.kind === 'current_thread').map((i) => i.citationId),
    ).toEqual(['turn-mine']);
    expect(context.items.some((i) => i.kind === 'cross_thread_episode')).toBe(false);
  });

  it('should never put stale memories or recipes into the context (it is proactive)', () => {
    const context = assembleContext(
      baseInput({
        memories: ranked([
          memory({ memoryId: 'stale-mem', staleAt: NOW }),
          memory({ memoryId: 'fresh-mem' }),
        ]),
        recipes: ranked([
          memory({ memoryId: 'stale-recipe', memoryType: 'workflow_recipe', staleAt: NOW }),
        ]),
      }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(
      context.items
        .filter((i) => ['memory', 'workflow_recipe'].includes(i.kind))
        .map((i) => i.citationId),
    ).toEqual(['mem-fresh-me']);
    expect(context.items.find((i) => i.kind === 'work_state')?.citationId).toBe('ws-ws-new-0'); // not the newer stale one
  });

  it("should never show another session's work state unless it is linked (issue #20)", () => {
    const others = [
      memory({
        memoryId: 'ws-other-01',
        memoryType: 'work_state',
        sessionId: 'session-9',
        episodeId: 'ep-other',
        content: 'someone else is halfway through a migration',
        timestamp: NOW - 60_000,
      }),
    ];
    const shown = (anchor: ReturnType<typeof workStateAnchor>) =>
      assembleContext(
        baseInput({ workStates: others, workStateAnchor: anchor }),
        DEFAULT_RANKING_CONFIG,
      )
        .items.filter((i) => i.kind === 'work_state')
        .map((i) => i.citationId);
    const thread = { threadId: 'thread-now', linkedEpisodeIds: [] };
    expect(shown(workStateAnchor('session-2', thread, []))).toEqual([]);
    // the current thread links to the episode it was written in
    expect(
      shown(workStateAnchor('session-2', { ...thread, linkedEpisodeIds: ['ep-other'] }, [])),
    ).toEqual(['ws-ws-other']);
  });

  it('should be deterministic whatever the input order', () => {
    const input = baseInput();
    const shuffled = baseInput({
      currentThread: [...input.currentThread].reverse(),
      workStates: [...input.workStates].reverse(),
    });
    expect(assembleContext(shuffled, DEFAULT_RANKING_CONFIG)).toEqual(
      assembleContext(input, DEFAULT_RANKING_CONFIG),
    );
  });

  it('should default a zero budget and refuse bad requests', () => {
    expect(assembleContext(baseInput({ tokenBudget: 0 }), DEFAULT_RANKING_CONFIG).tokenBudget).toBe(
      2_000,
    );
    expect(() => assembleContext(baseInput({ tokenBudget: -1 }), DEFAULT_RANKING_CONFIG)).toThrow(
      'tokenBudget',
    );
    expect(() => assembleContext(baseInput({ threadId: '' }), DEFAULT_RANKING_CONFIG)).toThrow(
      InvalidRecallRequestError,
    );
    expect(() =>
      assembleContext(
        baseInput({ scope: { tenantId: 't', projectId: '' } }),
        DEFAULT_RANKING_CONFIG,
      ),
    ).toThrow('projectId');
  });
});
