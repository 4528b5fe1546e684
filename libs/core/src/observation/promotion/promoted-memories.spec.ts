import { describe, expect, it } from 'vitest';
import { memoryIdOf } from '../../distillation/memories';
import { idOf } from '../../ids/deterministic-id';
import { observerSettings } from '../observer-settings';
import type { ScratchpadCommit } from '../scratchpad-records';
import {
  authWorkSessions,
  bash,
  DAY,
  edit,
  grep,
  MINUTE,
  NO_RANKING,
  promotionInput,
  read,
  runSession,
  T0,
} from '../testing/observer-fixtures';
import {
  draftCandidates,
  promoteRanked,
  rankCandidates,
  runPromotion,
  type PromotionInput,
} from './promotion-pipeline';
import type { Synthesiser } from './synthesiser';

const settings = observerSettings();

describe('promoted memories', () => {
  describe('promoteRanked', () => {
    const commits: ScratchpadCommit[] = [
      {
        eventId: 'c1',
        sessionId: 's1',
        at: T0 + 1000,
        sha: 'aaa111',
        files: ['src/auth/session.ts'],
      },
      {
        eventId: 'c2',
        sessionId: 's2',
        at: T0 + 9000,
        sha: 'bbb222',
        files: ['src/auth/session.ts', 'x.ts'],
      },
      { eventId: 'c3', sessionId: 's2', at: T0 + 99000, sha: 'ccc333', files: ['docs/readme.md'] },
    ];
    const episodes = [
      { sessionId: 's2', episodeId: 'episode-2', firstPromptId: 1, lastPromptId: 3 },
    ];

    async function promote(overrides: Partial<PromotionInput> = {}, synthesiser?: Synthesiser) {
      const input = promotionInput(authWorkSessions(3), { commits, ...overrides });
      return runPromotion(input, NO_RANKING, {
        workUnitRef: null,
        fallbackSessionId: 's2',
        episodes,
        synthesiser,
      });
    }

    it('should build memories with deterministic ids, provenance and the newest overlapping commit', async () => {
      const { memories } = await promote();
      const gotcha = memories.find((m) => m.memoryType === 'gotcha')!;
      expect(gotcha).toMatchObject({
        memoryId: idOf('memory', 'acme', 'acme/api', 'gotcha', 'src/auth/session.ts'),
        tenantId: 'acme',
        projectId: 'acme/api',
        source: 'observer_inferred',
        needsReview: true,
        scope: 'module',
        sessionId: 's2',
        episodeId: 'episode-2',
        commitSha: 'bbb222',
        provenanceSessionIds: ['s0', 's1', 's2'],
        sourceEventIds: ['s0-e3', 's1-e3', 's2-e3'],
        relatedFiles: ['src/auth/session.ts'],
        relatedModules: ['src/auth'],
        tags: ['observer', 'gotcha'],
        createdAt: T0 + 10 * MINUTE,
        citationText: 're-edits of src/auth/session.ts',
      });
      expect(gotcha.confidence).toBeGreaterThan(0.6);
      expect(gotcha.confidence).toBeLessThanOrEqual(0.95);
    });

    it('should give causal dependencies required_with relations to both files', async () => {
      const { memories } = await promote();
      const causal = memories.find((m) => m.memoryType === 'causal_dependency')!;
      expect(causal.relations.map((r) => [r.targetFilePath, r.relationType, r.confidence])).toEqual(
        [
          ['src/auth/session.ts', 'required_with', 1],
          ['src/auth/token.ts', 'required_with', 1],
        ],
      );
      const prefetch = memories.find((m) => m.memoryType === 'prefetch_pattern')!;
      expect(prefetch.prefetchPattern).toEqual({
        alwaysReadFiles: ['src/auth/session.ts', 'src/auth/token.ts'],
        frequentlyReadFiles: [],
        moduleTrigger: 'src/auth',
        sessionCount: 3,
      });
    });

    it('should lower confidence and tag memories of work that never validated', async () => {
      const validated = (await promote()).memories;
      const unvalidated = (await promote({ validated: false })).memories;
      const pick = (ms: typeof validated) => ms.find((m) => m.memoryType === 'gotcha')!;
      expect(pick(unvalidated).confidence).toBeCloseTo(pick(validated).confidence * 0.6, 2);
      expect(pick(unvalidated).tags).toContain('unvalidated');
      expect(pick(unvalidated).needsReview).toBe(true);
    });

    it('should give the same memories for the same input (idempotent replays)', async () => {
      expect((await promote()).memories).toEqual((await promote()).memories);
    });

    it("should use a synthesiser's text, keep templates for its nulls, and fall back when it fails", async () => {
      const rewriting: Synthesiser = {
        synthesise: (requests) =>
          Promise.resolve(
            requests.map((r, i) =>
              i === 0 ? { content: `LLM: ${r.draft.content}`, citationText: 'llm' } : null,
            ),
          ),
      };
      const rewritten = await promote({}, rewriting);
      expect(rewritten.memories[0].content.startsWith('LLM: ')).toBe(true);
      expect(rewritten.synthesis.writtenBy[1]).toBe('template');
      const failing: Synthesiser = { synthesise: () => Promise.reject(new Error('LLM down')) };
      const fallback = await promote({}, failing);
      expect(fallback.memories.map((m) => m.content)).toEqual(
        (await promote()).memories.map((m) => m.content),
      );
      expect(fallback.synthesis.error).toEqual(new Error('LLM down'));
    });

    it('should reuse the draft embedding only when the template text was kept', async () => {
      const input = promotionInput(authWorkSessions(3));
      const { drafts } = draftCandidates(input);
      const embeddings = new Map(drafts.map((d) => [d.key, { vector: [0.5, 0.5], model: 'mini' }]));
      const { selected } = rankCandidates(
        drafts,
        { ...NO_RANKING, embeddings },
        input.now,
        settings,
      );
      const { memories } = await promoteRanked(selected, input, {
        workUnitRef: null,
        fallbackSessionId: 's0',
      });
      expect(memories.every((m) => m.embeddingModel === 'mini' && m.embedding?.length === 2)).toBe(
        true,
      );
    });
  });

  describe('QA failures and notes', () => {
    it('should promote a high QA failure as qa_auto without review, and keep the agent note as agent_explicit', async () => {
      const input = promotionInput([], {
        qaIssues: [
          {
            eventId: 'qa1',
            sessionId: 'qa',
            at: T0,
            workUnitRef: null,
            severity: 'critical',
            description: 'Logout leaves the refresh timer running',
            file: 'src/auth/refresh.ts',
            module: 'auth',
            whatWasTried: null,
            recommendation: 'clear the timer in logout()',
          },
        ],
        notes: [
          {
            eventId: 'n1',
            sessionId: 's1',
            at: T0,
            text: 'We chose JWT over sessions for the API',
            memoryType: null,
            relatedFiles: [],
          },
        ],
      });
      const { memories } = await runPromotion(input, NO_RANKING, {
        workUnitRef: null,
        fallbackSessionId: 's1',
      });
      // Equal scores (both confirmed, fresh, novel): ordered by key.
      expect(memories.map((m) => [m.memoryType, m.source, m.needsReview, m.confidence])).toEqual([
        ['decision', 'agent_explicit', false, 0.9],
        ['error_pattern', 'qa_auto', false, 0.8],
      ]);
      expect(memories[1].content).toBe(
        'QA found (critical): Logout leaves the refresh timer running in `src/auth/refresh.ts`. Do instead: clear the timer in logout().',
      );
      // The same note distilled from the transcript would get the same id.
      expect(memories[0].memoryId).toBe(
        memoryIdOf('acme', 'acme/api', 'decision', 'We chose JWT over sessions for the API'),
      );
    });
  });

  describe('dead ends and recipes', () => {
    const deadEndSignals = runSession([
      edit(0, 'src/cache/redis.ts'),
      bash(1, 'npm test', 'ECONNREFUSED'),
      bash(2, 'git checkout -- src/cache/redis.ts'),
      edit(3, 'src/cache/memory.ts'),
    ]).signals;

    it('should promote a dead end with its extras and 90-day half-life', async () => {
      const input = promotionInput(deadEndSignals);
      const { memories } = await runPromotion(input, NO_RANKING, {
        workUnitRef: null,
        fallbackSessionId: 's1',
      });
      const deadEnd = memories.find((m) => m.memoryType === 'dead_end')!;
      expect(deadEnd).toMatchObject({
        decayHalfLifeDays: 90,
        deadEnd: {
          approachTried: 'changing src/cache/redis.ts (2 steps)',
          whyItFailed: 'ECONNREFUSED',
          alternativeUsed: 'src/cache/memory.ts',
          taskContext: 'src/cache',
        },
      });
    });

    it('should hold dead ends to the lower 0.3 score bar', () => {
      const { drafts } = draftCandidates(promotionInput(deadEndSignals));
      const deadEnd = drafts.find((d) => d.memoryType === 'dead_end')!;
      const embeddings = new Map([[deadEnd.key, { vector: [1, 0], model: 'mini' }]]);
      const halfNovel = [
        { memoryId: 'x', embedding: [0.5, Math.sqrt(0.75)], embeddingModel: 'mini' },
      ];
      const later = T0 + 60 * DAY;
      const ranked = rankCandidates(
        [deadEnd],
        { ...NO_RANKING, embeddings, existingMemories: halfNovel },
        later,
        settings,
      );
      // 0.4·0.5 + 0.3·0.05 + 0.3·0.5 ≈ 0.365: above 0.3, below the 0.6 every other type needs.
      expect(ranked.selected[0].breakdown.score).toBeCloseTo(0.365, 2);
      const asGotcha = rankCandidates(
        [{ ...deadEnd, memoryType: 'gotcha' }],
        { ...NO_RANKING, embeddings, existingMemories: halfNovel },
        later,
        settings,
      );
      expect(asGotcha.rejected[0].stage).toBe('score');
    });

    it('should promote a workflow recipe as a global memory at confidence 0.7 with its steps', async () => {
      const recipe = [
        grep(0, 'src/ipc/handlers.ts'),
        read(1, 'src/ipc/handlers.ts'),
        edit(2, 'src/ipc/handlers.ts'),
        edit(3, 'src/ipc/channels.ts'),
      ];
      const signals = [0, 1, 2].flatMap(
        (i) => runSession(recipe, { sessionId: `r${i}`, startAt: T0 + i * MINUTE }).signals,
      );
      const { memories } = await runPromotion(promotionInput(signals), NO_RANKING, {
        workUnitRef: null,
        fallbackSessionId: 'r0',
      });
      const memory = memories.find((m) => m.memoryType === 'workflow_recipe')!;
      expect(memory).toMatchObject({ scope: 'global', confidence: 0.7, needsReview: true });
      expect(memory.workflowRecipe).toMatchObject({
        taskPattern: 'work in src/ipc: Grep → Read → Edit → Edit',
        successCount: 3,
        steps: [
          {
            order: 1,
            description: 'Grep src/ipc/handlers.ts',
            canonicalFile: 'src/ipc/handlers.ts',
            canonicalLine: null,
          },
          { order: 2, description: 'Read src/ipc/handlers.ts' },
          { order: 3, description: 'Edit src/ipc/handlers.ts' },
          {
            order: 4,
            description: 'Edit src/ipc/channels.ts',
            canonicalFile: 'src/ipc/channels.ts',
          },
        ],
      });
    });
  });
});
