import { describe, expect, it } from 'vitest';
import { assembleContext } from './context-assembly';
import { selectInjections } from './proactive-injection';
import { rankByPriors } from './rank-memories';
import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { memory, NOW, SCOPE } from './testing/fixtures';
import { workStateAnchor } from './work-state-scope';
import {
  contextInWorkingTree,
  injectionInWorkingTree,
  recallInWorkingTree,
} from './working-tree-filter';

const ROOT = '/repo';
const LIVE = new Set(['src/live.ts']);
const check = { root: ROOT, exists: (path: string) => LIVE.has(path) };

const aboutDeleted = memory({
  memoryId: 'mem-deleted-0001',
  memoryType: 'gotcha',
  content: 'The session store must be flushed before logout',
  relatedFiles: ['src/deleted.ts'],
  confidence: 0.9,
  accessCount: 3,
});
const aboutLive = memory({
  memoryId: 'mem-live-000001',
  memoryType: 'gotcha',
  content: 'The live module retries twice',
  relatedFiles: ['src/live.ts', 'src/deleted.ts'],
  confidence: 0.9,
  accessCount: 3,
});

function context() {
  return assembleContext(
    {
      scope: SCOPE,
      threadId: 'thread-1',
      channel: 'implicit',
      currentThread: [],
      linkedEpisodes: [],
      memories: rankByPriors(
        { memories: [aboutDeleted, aboutLive], phase: 'implement', now: NOW },
        DEFAULT_RANKING_CONFIG,
      ),
      workStates: [],
      workStateAnchor: workStateAnchor(
        'session-1',
        { threadId: 'thread-1', linkedEpisodeIds: [] },
        [],
      ),
      recipes: [],
    },
    DEFAULT_RANKING_CONFIG,
  );
}

describe('contextInWorkingTree', () => {
  it('leaves out the item about a deleted file and re-renders the rest', () => {
    const assembled = context();
    expect(assembled.rendered).toContain('session store must be flushed');
    const { answer, gone } = contextInWorkingTree(assembled, check);
    expect(answer.rendered).not.toContain('session store must be flushed');
    expect(answer.rendered).toContain('The live module retries twice');
    expect(answer.rendered).toContain('## Relevant memories');
    expect(gone).toHaveLength(1);
  });

  it('returns the answer as it came when every file is there', () => {
    const assembled = context();
    const { answer, gone } = contextInWorkingTree(assembled, {
      root: ROOT,
      exists: () => true,
    });
    expect(answer).toBe(assembled);
    expect(gone).toEqual([]);
  });
});

describe('injectionInWorkingTree', () => {
  const selection = selectInjections(
    {
      scope: SCOPE,
      filePath: 'src/deleted.ts',
      phase: 'implement',
      now: NOW,
      candidates: [aboutDeleted, aboutLive],
    },
    DEFAULT_RANKING_CONFIG,
  );

  it('drops the warning whose every file is gone, keeps one still about a live file', () => {
    expect(selection.memories).toHaveLength(2);
    const { answer } = injectionInWorkingTree(selection, check);
    expect(answer.memories.map((m) => m.memory.memoryId)).toEqual(['mem-live-000001']);
    expect(answer.rendered).toContain('[mem-live]');
    expect(answer.rendered).not.toContain('[mem-dele]');
  });

  it('renders nothing once every warning is gone', () => {
    const { answer } = injectionInWorkingTree(selection, { root: ROOT, exists: () => false });
    expect(answer.rendered).toBe('');
    expect(answer.memories).toEqual([]);
  });
});

describe('recallInWorkingTree', () => {
  it('marks a memory about gone files stale and keeps it, order unchanged', () => {
    const results = [
      { memory: aboutDeleted, text: aboutDeleted.content },
      { memory: null, text: 'an episode' },
      { memory: aboutLive, text: aboutLive.content },
    ];
    const { answer } = recallInWorkingTree(results, check);
    expect(answer.map((r) => r.text)).toEqual([
      `${DEFAULT_RANKING_CONFIG.stale.prefix} ${aboutDeleted.content}`,
      'an episode',
      aboutLive.content,
    ]);
  });

  it('does not mark twice what the service already marked', () => {
    const text = `${DEFAULT_RANKING_CONFIG.stale.prefix} ${aboutDeleted.content}`;
    const { answer } = recallInWorkingTree([{ memory: aboutDeleted, text }], check);
    expect(answer[0].text).toBe(text);
  });
});
