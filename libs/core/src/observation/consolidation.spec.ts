import { describe, expect, it } from 'vitest';
import { consolidationCandidates } from './consolidation';
import { observerSettings } from './observer-settings';
import { promoteRanked } from './promotion/promotion-pipeline';
import { newScratchpad, type Scratchpad } from './scratchpad';
import type { SegmentDigest } from './segment-digest';
import { envelopeOf, subtaskRef, T0 } from './testing/observer-fixtures';

const settings = observerSettings();

function padWith(digests: SegmentDigest[]): Scratchpad {
  const pad = newScratchpad(envelopeOf('start'), {
    ...subtaskRef('spec_042', 1),
    label: 'Spec 042',
  });
  pad.segments = digests.map((digest, i) => ({
    segmentId: i,
    workUnitRef: subtaskRef('spec_042', i + 1),
    status: 'promoted',
    signals: [],
    notes: [],
    openedAt: T0,
    closedAt: T0,
    digest,
  }));
  return pad;
}

function digest(overrides: Partial<SegmentDigest>): SegmentDigest {
  return { edits: {}, errors: {}, backtracks: {}, modulePairs: {}, deadEnds: 0, ...overrides };
}

describe('consolidationCandidates', () => {
  const digests = Array.from({ length: 10 }, (_, i) =>
    digest({
      edits: { 'src/auth/token.ts': 2, ...(i % 2 === 0 ? { 'src/api/routes.ts': 1 } : {}) },
      modulePairs: i < 3 ? { 'src/api\u0000src/auth': 1 } : {},
      errors:
        i < 2
          ? {
              k: {
                toolName: 'Bash',
                normalisedError: 'TS2307: Cannot find module <path>',
                occurrences: 2,
              },
            }
          : {},
      backtracks: i < 2 ? { 'src/auth/token.ts': 1 } : {},
    }),
  );

  it('should write 2–5 global insights about where the spec changed the project', () => {
    const candidates = consolidationCandidates(padWith(digests), T0, settings);
    expect(candidates.map((c) => c.draft.content)).toEqual([
      'Across 10 subtasks of Spec 042, most changes landed in `src/auth` (20 edits in 10 subtasks), `src/api` (5 edits in 5 subtasks).',
      'Files changed by the most subtasks: `src/auth/token.ts` (10), `src/api/routes.ts` (5); work in this area usually touches them.',
      '`src/api` and `src/auth` were worked on together in 3 subtasks: a change in one usually involves the other.',
      'The Bash error "TS2307: Cannot find module <path>" recurred in 2 subtasks (4 times): fix its cause rather than retrying.',
      'Edits needed immediate correction in `src/auth/token.ts` (2 subtasks): plan changes there before editing.',
    ]);
    expect(candidates.every((c) => c.memoryType === 'module_insight' && c.scope === 'global')).toBe(
      true,
    );
  });

  it('should write at least 2 when subtasks edited anything, none when they did not', () => {
    const quiet = digests.map((d) => ({ ...d, modulePairs: {}, errors: {}, backtracks: {} }));
    expect(consolidationCandidates(padWith(quiet), T0, settings)).toHaveLength(2);
    expect(consolidationCandidates(padWith([digest({}), digest({})]), T0, settings)).toEqual([]);
  });

  it('should become memories at confidence 0.85 with stable ids', async () => {
    const pad = padWith(digests);
    const build = () =>
      promoteRanked(
        consolidationCandidates(pad, T0, settings),
        {
          tenantId: 'acme',
          projectId: 'acme/api',
          commits: [],
          validated: true,
          now: T0,
          settings,
        },
        {
          workUnitRef: pad.workUnitRoot,
          fallbackSessionId: 's1',
        },
      );
    const { memories } = await build();
    expect(memories[0]).toMatchObject({
      memoryType: 'module_insight',
      scope: 'global',
      confidence: 0.85,
      needsReview: true,
      tags: ['observer', 'consolidation'],
    });
    expect((await build()).memories.map((m) => m.memoryId)).toEqual(
      memories.map((m) => m.memoryId),
    );
  });
});
