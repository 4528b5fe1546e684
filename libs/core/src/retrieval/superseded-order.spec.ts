import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { SUPERSEDED_BY_TAG } from '../memory/superseded';
import { latestSuccessor, listedSuccessors } from './superseded-order';

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

const successors = (items: (Listed | null)[]) => Object.fromEntries(listedSuccessors(items));

describe('listedSuccessors', () => {
  it('should read the successor from the superseded-by tag, skipping non-memory results', () => {
    expect(successors([listed('old', 'new'), null, listed('x'), listed('new')])).toEqual({
      old: 'new',
    });
  });

  it('should read the successor from its supersedes relation when the tag is missing', () => {
    expect(successors([listed('old'), listed('new', undefined, 'old')])).toEqual({ old: 'new' });
  });

  it('should know no successor that is not listed, nor a memory naming itself', () => {
    expect(successors([listed('old', 'elsewhere'), listed('self', 'self'), listed('x')])).toEqual(
      {},
    );
  });
});

describe('latestSuccessor', () => {
  it('should follow a chain to its current end', () => {
    const chain = listedSuccessors([listed('a', 'b'), listed('b', 'c'), listed('c')]);
    expect(latestSuccessor('a', chain)).toBe('c');
    expect(latestSuccessor('b', chain)).toBe('c');
    expect(latestSuccessor('c', chain)).toBe('c');
  });

  it('should give no end for a chain that runs into a cycle', () => {
    const cycle = listedSuccessors([listed('a', 'b'), listed('b', 'c'), listed('c', 'b')]);
    expect(latestSuccessor('a', cycle)).toBeNull();
    expect(latestSuccessor('b', cycle)).toBeNull();
  });
});
