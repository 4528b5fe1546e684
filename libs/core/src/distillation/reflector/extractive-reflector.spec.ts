import { describe, expect, it } from 'vitest';
import { distillationToMemories } from '../memories';
import { renderProposalsText } from './reflector-prompt';
import { reflectExtractively, type ReflectionInput } from './extractive-reflector';
import { REFLECT_AT, weekOfDistillations } from '../testing/reflector-fixtures';

function input(overrides: Partial<ReflectionInput> = {}): ReflectionInput {
  return {
    tenantId: 'acme',
    projectId: 'acme/api',
    now: REFLECT_AT,
    distillations: weekOfDistillations(),
    ...overrides,
  };
}

describe('reflectExtractively', () => {
  const result = reflectExtractively(input());

  it('should propose per section, in section order, with p-YYYYMMDD-NNN ids', () => {
    expect(result.proposals.map((p) => [p.proposalId, p.section, p.text])).toEqual([
      ['p-20260217-001', 'User', 'I prefer small commits with conventional commit messages.'],
      ['p-20260217-002', 'Hard Rules', 'Never commit the .env file.'],
      [
        'p-20260217-003',
        'Hard Rules',
        'Always run the auth tests with --no-file-parallelism, they share the clock.',
      ],
      [
        'p-20260217-004',
        'System Architecture',
        "Let's use one consumer group per service because rebalances were slow.",
      ],
      [
        'p-20260217-005',
        'System Architecture',
        "Don't touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts.",
      ],
      [
        'p-20260217-006',
        'System Architecture',
        "Let's use fake timers instead of real sleeps in these tests because the CI machines are slow.",
      ],
      [
        'p-20260217-007',
        'Patterns',
        '`npm run build` failed with "error TS2307: Cannot find module \'kafkajs\'"; fixed by editing src/billing/consumer.ts, after which it passed',
      ],
      [
        'p-20260217-008',
        'Patterns',
        '`npm test -- src/auth/refresh.spec.ts` failed with "AssertionError: expected 401 to be 200"; fixed by editing src/auth/cache.ts, src/auth/clock.ts, after which it passed',
      ],
      [
        'p-20260217-009',
        'Patterns',
        '`npx vitest run src/auth` worked where `npm run test:unit` failed with "Error: Cannot find module \'vitest/config\'"',
      ],
    ]);
  });

  it('should merge a rule stated in two sessions into one proposal with the latest wording and both as evidence', () => {
    const rule = result.proposals.find((p) => p.text.startsWith('Always run the auth tests'));
    expect(rule?.evidence.sessionIds).toEqual(['sess-debug', 'sess-review']);
    expect(rule?.evidence.eventIds).toEqual(['sess-debug-p4', 'sess-review-p2']);
    expect(rule?.evidence.memoryIds).toHaveLength(2);
  });

  it('should cite as evidence the ids of the memories the facts became', () => {
    const memoryIds = new Set(
      weekOfDistillations().flatMap((d) => distillationToMemories(d).map((m) => m.memoryId)),
    );
    for (const proposal of result.proposals) {
      expect(proposal.evidence.memoryIds.length).toBeGreaterThan(0);
      for (const id of proposal.evidence.memoryIds) expect(memoryIds.has(id)).toBe(true);
    }
  });

  it('should never propose 🟢 facts or working context (file changes, exploration)', () => {
    const texts = result.proposals.map((p) => p.text).join('\n');
    expect(texts).not.toContain('Modified ');
    expect(texts).not.toContain('Explored');
  });

  it('should condense distillations older than three days to narratives and 🔴 facts', () => {
    expect(result.condensed).toBe(1);
    // The old session's 🟡 file change is gone; its 🔴 rule and decision remain.
    expect(result.proposals.some((p) => p.evidence.sessionIds.includes('sess-old'))).toBe(true);
  });

  it('should write less than it read (compression validation)', () => {
    expect(result.outputTokens).toBeLessThan(result.inputTokens);
    expect(result.compressed).toBe(true);
    expect(result.outputTokens).toBe(Math.ceil(renderProposalsText(result.proposals).length / 4));
  });

  it('should create pending proposals that expire after seven days, with a logged creation', () => {
    const [first] = result.proposals;
    expect(first).toMatchObject({
      status: 'pending',
      createdAt: REFLECT_AT,
      expiresAt: REFLECT_AT + 7 * 86_400_000,
      decidedAt: null,
      promotedMemoryId: null,
      history: [
        { action: 'create', from: null, to: 'pending', at: REFLECT_AT, by: null, note: null },
      ],
    });
  });

  it('should propose nothing new when run again with its own proposals (a redelivered run)', () => {
    const again = reflectExtractively(input({ existingProposals: result.proposals }));
    expect(again.proposals).toEqual([]);
    expect(again.skipped.map((s) => s.reason)).toEqual(Array(9).fill('already-proposed'));
  });

  it("should skip what the curated memory already says and continue the day's numbering", () => {
    const again = reflectExtractively(
      input({
        existingProposals: [
          { proposalId: 'p-20260217-014', text: 'unrelated', originalText: 'unrelated' },
        ],
        curatedMemories: [{ content: 'Never commit the .env file' }],
      }),
    );
    expect(again.skipped).toEqual([
      { text: 'Never commit the .env file.', reason: 'already-curated' },
    ]);
    expect(again.proposals[0].proposalId).toBe('p-20260217-015');
  });

  it('should be deterministic whatever the order of the distillations', () => {
    expect(reflectExtractively(input({ distillations: weekOfDistillations().reverse() }))).toEqual(
      result,
    );
  });

  it('should propose a 🟡 fact only when it recurs in two sessions', () => {
    const [debug] = weekOfDistillations();
    const yellow = {
      ...debug.segments[0].facts[0],
      priority: '🟡' as const,
      kind: null,
      text: 'Integration tests need the local Kafka broker on port 9092',
    };
    const one = { ...debug, segments: [{ ...debug.segments[0], facts: [yellow] }] };
    const other = { ...one, sessionId: 'sess-other', dedupeKey: 'k2' };
    expect(reflectExtractively(input({ distillations: [one] })).proposals).toEqual([]);
    const recurring = reflectExtractively(input({ distillations: [one, other] })).proposals;
    expect(recurring.map((p) => [p.section, p.text])).toEqual([
      ['System Architecture', 'Integration tests need the local Kafka broker on port 9092'],
    ]);
  });
});
