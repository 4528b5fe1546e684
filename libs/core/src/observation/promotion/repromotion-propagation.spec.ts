import type { Memory, MemoryRelation, RelationType } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { memoriesByFileOn } from '../../ports/memories-by-file';
import { memory } from '../../retrieval/testing/fixtures';
import { withPropagatedConfidence } from './repromotion-propagation';

function relation(relationType: RelationType, targetMemoryId: string | null): MemoryRelation {
  return {
    relationType,
    targetMemoryId,
    targetFilePath: targetMemoryId === null ? 'src/a.ts' : null,
    confidence: 1,
    autoExtracted: true,
  };
}

/** The memory topic as compaction leaves it, read as the observer reads it. */
function topic(...memories: Memory[]) {
  const asked: string[][] = [];
  const lookup = memoriesByFileOn({ refresh: () => Promise.resolve(), values: () => memories });
  return {
    asked,
    memoriesWithIds: (scope: { tenantId: string; projectId: string }, ids: readonly string[]) => {
      asked.push([...ids]);
      return lookup.memoriesWithIds(scope, ids);
    },
  };
}

const confidences = (written: Memory[]) =>
  written.map((m) => [m.memoryId, Number(m.confidence.toFixed(4))]);

describe('withPropagatedConfidence', () => {
  it("should move what a re-promotion's committed relations reach, keeping those relations", async () => {
    // The observer writes only file relations; the committed version also validates b.
    const committedA = memory({
      memoryId: 'a',
      confidence: 0.6,
      relations: [relation('required_with', null), relation('validates', 'b')],
    });
    const log = topic(committedA, memory({ memoryId: 'b', confidence: 0.5 }));
    const a = memory({
      memoryId: 'a',
      eventId: 'a-v2',
      confidence: 0.9,
      relations: [relation('required_with', null)],
    });
    const fresh = memory({ memoryId: 'new', confidence: 0.7 });
    const written = await withPropagatedConfidence([a, fresh], new Set(['a']), log.memoriesWithIds);
    expect(confidences(written)).toEqual([
      ['a', 0.9],
      ['new', 0.7],
      ['b', 0.68], // 0.5 + 0.6 · (0.9 − 0.6)
    ]);
    expect(written[0].relations).toEqual(committedA.relations);
    expect(written[2].sourceEventIds).toContain('a-v2');
    // Only the re-promotion is looked up, then what its relations name.
    expect(log.asked).toEqual([['a'], ['b']]);
  });

  it('should reach a memory of the same transaction at its new version, not the committed one', async () => {
    const log = topic(
      memory({ memoryId: 'a', confidence: 0.9, relations: [relation('supersedes', 'b')] }),
      memory({ memoryId: 'b', confidence: 0.9 }),
    );
    const a = memory({ memoryId: 'a', confidence: 0.5 });
    const b = memory({ memoryId: 'b', eventId: 'b-v2', confidence: 0.7 });
    const written = await withPropagatedConfidence([a, b], new Set(['a']), log.memoriesWithIds);
    // 0.7 + 0.8 · (0.5 − 0.9)
    expect(confidences(written)).toEqual([
      ['a', 0.5],
      ['b', 0.7],
      ['b', 0.38],
    ]);
  });

  it("should write nothing more for an unchanged confidence, a first promotion, or another project's memory", async () => {
    const log = topic(
      memory({ memoryId: 'a', confidence: 0.6, relations: [relation('validates', 'b')] }),
      memory({ memoryId: 'b', confidence: 0.5, projectId: 'other' }),
      memory({ memoryId: 'c', confidence: 0.6, relations: [relation('validates', 'd')] }),
      memory({ memoryId: 'd', confidence: 0.5 }),
    );
    const a = memory({ memoryId: 'a', confidence: 0.9 });
    const c = memory({ memoryId: 'c', confidence: 0.6 });
    const written = await withPropagatedConfidence(
      [a, c],
      new Set(['a', 'c']),
      log.memoriesWithIds,
    );
    expect(confidences(written)).toEqual([
      ['a', 0.9],
      ['c', 0.6],
    ]);
    expect(await withPropagatedConfidence([a], new Set(), log.memoriesWithIds)).toEqual([a]);
  });
});
