import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { SUPERSEDED_BY_TAG } from '../memory/superseded';
import { supersededAfterSuccessors } from './superseded-order';

type Listed = Pick<Memory, 'memoryId' | 'tags' | 'relations'>;

function listed(memoryId: string, supersededBy?: string, supersedes?: string): Listed {
  return {
    memoryId,
    tags: supersededBy === undefined ? [] : [`${SUPERSEDED_BY_TAG}${supersededBy}`],
    relations:
      supersedes === undefined
        ? []
        : [
            {
              targetMemoryId: supersedes,
              targetFilePath: null,
              relationType: 'supersedes',
              confidence: 0.8,
              autoExtracted: true,
            },
          ],
  };
}

const order = (items: (Listed | null)[]) =>
  supersededAfterSuccessors(items, (item) => item).map((item) => item?.memoryId ?? '-');

describe('supersededAfterSuccessors', () => {
  it('should move a superseded memory to just below its successor, the rest in order', () => {
    expect(order([listed('old', 'new'), listed('x'), listed('new'), listed('y')])).toEqual([
      'x',
      'new',
      'old',
      'y',
    ]);
  });

  it('should read the successor from its supersedes relation when the tag is missing', () => {
    expect(order([listed('old'), listed('new', undefined, 'old')])).toEqual(['new', 'old']);
  });

  it('should leave a superseded memory whose successor is not listed, or already above it', () => {
    expect(order([listed('old', 'elsewhere'), listed('x')])).toEqual(['old', 'x']);
    expect(order([listed('new'), listed('x'), listed('old', 'new')])).toEqual(['new', 'x', 'old']);
  });

  it('should order a chain newest first and keep non-memory items where they were', () => {
    expect(order([listed('a', 'b'), null, listed('b', 'c'), listed('c')])).toEqual([
      '-',
      'c',
      'b',
      'a',
    ]);
  });

  it('should keep every item once in a cycle', () => {
    expect(order([listed('a', 'b'), listed('b', 'a'), listed('z')])).toEqual(['a', 'b', 'z']);
    expect(order([listed('a', 'b'), listed('b', 'c'), listed('c', 'b')])).toEqual(['b', 'a', 'c']);
  });
});
