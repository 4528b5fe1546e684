import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { distillationToMemories } from './memories';
import { memorySection, renderMemoryMd } from './memory-md';
import { applyReviewAction } from './proposals/review';
import { reflectExtractively } from './reflector/extractive-reflector';
import { REFLECT_AT, weekOfDistillations } from './testing/reflector-fixtures';

const DAY = 86_400_000;

function curated(): Memory[] {
  const { proposals } = reflectExtractively({
    tenantId: 'acme',
    projectId: 'acme/api',
    now: REFLECT_AT,
    distillations: weekOfDistillations(),
  });
  return proposals.map((p, i) => {
    const outcome = applyReviewAction(p, {
      kind: 'approve',
      at: REFLECT_AT + DAY + i * 60_000,
      by: 'tim',
    });
    if (!outcome.ok || outcome.promoted === null) throw new Error('not promoted');
    return outcome.promoted;
  });
}

describe('renderMemoryMd', () => {
  it('should render the four sections in order, one dated line per memory', () => {
    expect(renderMemoryMd(curated(), { projectId: 'acme/api' })).toBe(`# MEMORY — acme/api

_Curated by Engram: 9 memories, last updated 2026-02-18._

## User

- (2026-02-18) I prefer small commits with conventional commit messages.

## Hard Rules

- (2026-02-18) Never commit the .env file.
- (2026-02-18) Always run the auth tests with --no-file-parallelism, they share the clock.

## System Architecture

- (2026-02-18) Let's use one consumer group per service because rebalances were slow.
- (2026-02-18) Don't touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts.
- (2026-02-18) Let's use fake timers instead of real sleeps in these tests because the CI machines are slow.

## Patterns

- (2026-02-18) \`npm run build\` failed with "error TS2307: Cannot find module 'kafkajs'"; fixed by editing src/billing/consumer.ts, after which it passed
- (2026-02-18) \`npm test -- src/auth/refresh.spec.ts\` failed with "AssertionError: expected 401 to be 200"; fixed by editing src/auth/cache.ts, src/auth/clock.ts, after which it passed
- (2026-02-18) \`npx vitest run src/auth\` worked where \`npm run test:unit\` failed with "Error: Cannot find module 'vitest/config'"
`);
  });

  it('should give the same bytes for the same memories in any order, duplicates included', () => {
    const memories = curated();
    expect(renderMemoryMd([...memories].reverse().concat(memories.slice(0, 3)))).toBe(
      renderMemoryMd(memories),
    );
  });

  it('should leave out unverified, stale and work_state memories unless asked', () => {
    const [first, ...rest] = curated();
    const stale = { ...rest[0], staleAt: REFLECT_AT };
    const distilled = distillationToMemories(weekOfDistillations()[0]);
    const md = renderMemoryMd([first, stale, ...distilled]);
    expect(md).toContain('_Curated by Engram: 1 memory, last updated 2026-02-18._');
    expect(md).toContain('## Hard Rules\n\n_Nothing yet._');
    expect(renderMemoryMd(distilled, { includeUnverified: true })).toContain(
      'Rule: Always run the auth tests',
    );
  });

  it('should render an empty memory', () => {
    expect(renderMemoryMd([])).toBe(
      '# MEMORY\n\n_Curated by Engram: no memories yet._\n\n## User\n\n_Nothing yet._\n\n## Hard Rules\n\n_Nothing yet._\n\n## System Architecture\n\n_Nothing yet._\n\n## Patterns\n\n_Nothing yet._\n',
    );
  });

  it('should place a memory by its section tag, else by its type', () => {
    expect(memorySection({ tags: ['section:hard-rules'], memoryType: 'pattern' })).toBe(
      'Hard Rules',
    );
    expect(memorySection({ tags: [], memoryType: 'decision' })).toBe('System Architecture');
    expect(memorySection({ tags: [], memoryType: 'gotcha' })).toBe('Patterns');
  });
});
