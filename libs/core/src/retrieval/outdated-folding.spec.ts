import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { SUPERSEDED_BY_TAG } from '../memory/superseded';
import { foldOutdated, MAX_REPLACED_PER_RESULT } from './outdated-folding';
import { memory, NOW } from './testing/fixtures';

const current = (memoryId: string, content: string, overrides: Partial<Memory> = {}) =>
  memory({ memoryId, content, ...overrides });
const supersededBy = (memoryId: string, by: string, content = `old text of ${memoryId}`) =>
  memory({ memoryId, content, staleAt: NOW, tags: [`${SUPERSEDED_BY_TAG}${by}`] });
const deleted = (memoryId: string, content: string, overrides: Partial<Memory> = {}) =>
  memory({ memoryId, content, staleAt: NOW, ...overrides });

/** Each result as `id` or `id<old1,old2>`; a null item (not a memory) as `-`. */
function fold(items: (Memory | null)[], k = 10): string[] {
  return foldOutdated(items, (item) => item, k).map(({ item, replaces }) => {
    const id = item?.memoryId ?? '-';
    return replaces.length === 0
      ? id
      : `${id}<${replaces.map((r) => `${r.item!.memoryId}:${r.reason}`).join(',')}>`;
  });
}

describe('foldOutdated', () => {
  it('should fold a superseded memory into its successor, ranked above it or not', () => {
    const old = supersededBy('old', 'new');
    const fresh = current('new', 'billing talks to orders over gRPC');
    expect(fold([fresh, current('x', 'unrelated'), old])).toEqual(['new<old:superseded>', 'x']);
    // Ranked above its successor: the successor takes its slot.
    expect(fold([old, current('x', 'unrelated'), fresh])).toEqual(['new<old:superseded>', 'x']);
  });

  it('should read the successor from the supersedes relation when the tag is missing', () => {
    const old = deleted('old', 'billing talks to orders over REST');
    const fresh = current('new', 'billing talks to orders over gRPC', {
      relations: [
        {
          targetMemoryId: 'old',
          targetFilePath: null,
          relationType: 'supersedes',
          confidence: 0.8,
          autoExtracted: true,
        },
      ],
    });
    expect(fold([old, fresh])).toEqual(['new<old:stale>']);
  });

  it('should fold a whole chain into its current end, best ranked first', () => {
    const a = supersededBy('a', 'b');
    const b = supersededBy('b', 'c');
    const c = current('c', 'the current decision');
    expect(fold([b, current('x', 'other'), a, c])).toEqual(['c<b:superseded,a:superseded>', 'x']);
  });

  it('should leave the members of a supersession cycle as results of their own', () => {
    const a = supersededBy('a', 'b', 'first cycle member text');
    const b = supersededBy('b', 'a', 'second cycle member wording');
    expect(fold([a, b, current('z', 'zebra crossing painted white')])).toEqual(['a', 'b', 'z']);
  });

  it('should fold a stale memory into the best current memory about the same subject', () => {
    const gone = deleted(
      'gone',
      'Invoice numbering in src/billing/numbers.ts holds the advisory lock',
    );
    const other = current('other', 'Deploys run from the main branch on Fridays');
    const sameSubjectLow = current(
      'low',
      'Invoice numbering holds the advisory lock in src/billing/sequence.ts',
    );
    const sameSubjectHigh = current('high', 'Invoice numbering takes the advisory lock per tenant');
    expect(fold([gone, other, sameSubjectHigh, sameSubjectLow])).toEqual([
      'high<gone:stale>',
      'other',
      'low',
    ]);
  });

  it('should keep a stale memory with no current one about its subject, and never fold across projects', () => {
    const gone = deleted(
      'gone',
      'Invoice numbering in src/billing/numbers.ts holds the advisory lock',
    );
    const elsewhere = current('elsewhere', 'Invoice numbering holds the advisory lock per tenant', {
      projectId: 'another-project',
    });
    expect(fold([gone, current('x', 'Deploys run from the main branch'), elsewhere])).toEqual([
      'gone',
      'x',
      'elsewhere',
    ]);
  });

  it('should fold a superseded memory whose successor is not listed by subject', () => {
    const old = supersededBy('old', 'not-listed', 'Billing talks to the ledger over REST calls');
    const host = current('host', 'Billing talks to the ledger over a Kafka topic');
    expect(fold([old, host])).toEqual(['host<old:superseded>']);
  });

  it('should refill the folded slots from below the cut, and cut to k', () => {
    const items = [
      current('new', 'the current decision'),
      supersededBy('old', 'new'),
      current('p', 'alpha'),
      current('q', 'beta'),
      current('r', 'gamma'),
    ];
    expect(fold(items, 3)).toEqual(['new<old:superseded>', 'p', 'q']);
    expect(fold(items, 0)).toEqual([]);
  });

  it('should keep results that are not memories in place, and show at most a few replaced', () => {
    const olds = ['o1', 'o2', 'o3', 'o4'].map((id) => supersededBy(id, 'new'));
    const results = fold([null, ...olds, current('new', 'the current decision'), null]);
    expect(results).toEqual(['-', 'new<o1:superseded,o2:superseded,o3:superseded>', '-']);
    expect(MAX_REPLACED_PER_RESULT).toBe(3);
  });
});
