import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { SUPERSEDED_BY_TAG } from '../memory/superseded';
import { contextSources, type ContextSourcesInput } from './context-sources';
import { injectionBlock, mayInject, supersededIdsIn } from './injection-guard';
import { selectInjections } from './proactive-injection';
import { rankByPriors } from './rank-memories';
import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { DAY, memory, NOW, SCOPE } from './testing/fixtures';
import { latestWorkState, workStateAnchor } from './work-state-scope';

const FILE = 'src/billing/invoice.ts';

/** A gotcha about FILE that passes every injection rule but the guard's. */
function gotcha(memoryId: string, overrides: Partial<Memory> = {}): Memory {
  return memory({
    memoryId,
    memoryType: 'gotcha',
    relatedFiles: [FILE],
    confidence: 0.9,
    accessCount: 3,
    ...overrides,
  });
}

function supersedes(targetMemoryId: string): Memory['relations'][number] {
  return {
    targetMemoryId,
    targetFilePath: null,
    relationType: 'supersedes',
    confidence: 0.8,
    autoExtracted: true,
  };
}

/** The older memory, and a newer one that says it supersedes it; the older not yet demoted. */
const older = gotcha('old', { content: 'Invoice totals must hold the ledger lock' });
const newer = gotcha('new', {
  content: 'Invoice totals no longer need the ledger lock',
  createdAt: NOW - DAY,
  relations: [supersedes('old')],
});
const ANCHOR = workStateAnchor('session-1', { threadId: 'thread-1', linkedEpisodeIds: [] }, []);

/** BuildContext's candidates: none but those given. */
function sourcesInput(overrides: Partial<ContextSourcesInput>): ContextSourcesInput {
  return {
    scope: SCOPE,
    threadId: 'thread-1',
    channel: 'explicit',
    currentThread: [],
    linkedEpisodes: [],
    memories: [],
    workStates: [],
    workStateAnchor: ANCHOR,
    recipes: [],
    ...overrides,
  };
}

const taggedOnly = gotcha('tagged', { tags: [`${SUPERSEDED_BY_TAG}new`], staleAt: null });

describe('injectionBlock', () => {
  it('should block stale memories, superseded ones (tag or a relation at hand), not current ones', () => {
    expect(injectionBlock(gotcha('stale', { staleAt: NOW - DAY }))).toBe('stale');
    expect(injectionBlock(taggedOnly)).toBe('superseded');
    expect(injectionBlock(older, supersededIdsIn([older, newer]))).toBe('superseded');
    expect(injectionBlock(older)).toBeNull();
    expect(mayInject(newer, supersededIdsIn([older, newer]))).toBe(true);
  });

  it('should read only supersedes relations to other memories', () => {
    const relations: Memory['relations'] = [
      { ...supersedes('a'), relationType: 'validates' },
      { ...supersedes('self') },
      { ...supersedes('b'), targetMemoryId: null, targetFilePath: FILE },
      supersedes('c'),
    ];
    expect([...supersededIdsIn([gotcha('self', { relations })])]).toEqual(['c']);
  });
});

describe('the guard on every injection path', () => {
  it('InjectForFile should not inject a superseded memory, even before its demotion is written', () => {
    const selection = selectInjections(
      { scope: SCOPE, filePath: FILE, phase: 'implement', now: NOW, candidates: [older, newer] },
      DEFAULT_RANKING_CONFIG,
    );
    expect(selection.memories.map((m) => m.memory.memoryId)).toEqual(['new']);
    expect(selection.rejected).toEqual([{ memoryId: 'old', reason: 'superseded' }]);
  });

  it('InjectForFile should not inject a memory tagged superseded without staleAt', () => {
    const selection = selectInjections(
      { scope: SCOPE, filePath: FILE, phase: 'implement', now: NOW, candidates: [taggedOnly] },
      DEFAULT_RANKING_CONFIG,
    );
    expect(selection.memories).toEqual([]);
    expect(selection.rejected).toEqual([{ memoryId: 'tagged', reason: 'superseded' }]);
  });

  it('BuildContext should leave superseded memories and recipes out', () => {
    const ranked = (memories: Memory[]) =>
      rankByPriors({ memories, phase: 'implement', now: NOW }, DEFAULT_RANKING_CONFIG);
    const recipe = (memoryId: string, overrides: Partial<Memory> = {}) =>
      memory({
        memoryId,
        memoryType: 'workflow_recipe',
        content: `recipe ${memoryId}`,
        ...overrides,
      });
    const input = sourcesInput({
      memories: ranked([older, newer, taggedOnly]),
      recipes: ranked([
        recipe('recipe-old'),
        recipe('recipe-new', { createdAt: NOW - DAY, relations: [supersedes('recipe-old')] }),
      ]),
    });
    const sources = contextSources(input, DEFAULT_RANKING_CONFIG);
    expect(sources.memory.map((s) => s.sourceId)).toEqual(['new']);
    expect(sources.workflow_recipe.map((s) => s.sourceId)).toEqual(['recipe-new']);
  });

  it("BuildContext's work state should skip a superseded one for the latest injectable one", () => {
    const state = (memoryId: string, timestamp: number, overrides: Partial<Memory> = {}) =>
      memory({ memoryId, memoryType: 'work_state', timestamp, ...overrides });
    const earlier = state('ws-earlier', NOW - 2 * DAY);
    const replaced = state('ws-replaced', NOW - DAY, { tags: [`${SUPERSEDED_BY_TAG}ws-earlier`] });
    expect(latestWorkState([earlier, replaced], ANCHOR)?.memoryId).toBe('ws-earlier');
    const input = sourcesInput({
      workStates: [state('ws-a', NOW - 2 * DAY), state('ws-b', NOW - DAY)],
    });
    expect(contextSources(input, DEFAULT_RANKING_CONFIG).work_state[0]?.sourceId).toBe('ws-b');
    input.workStates = [state('ws-a', NOW - 2 * DAY), replaced];
    expect(contextSources(input, DEFAULT_RANKING_CONFIG).work_state[0]?.sourceId).toBe('ws-a');
  });
});
