import { describe, expect, it } from 'vitest';
import { DAY, memory, NOW } from '../retrieval/testing/fixtures';
import { prunedVersion } from './pruning';
import { memoriesToReview, reviewReason } from './review-queue';

describe('memoriesToReview', () => {
  it('should queue the unconfirmed memories flagged needsReview, newest first', () => {
    const queued = memoriesToReview([
      memory({ memoryId: 'old', needsReview: true, createdAt: NOW - 9 * DAY }),
      memory({ memoryId: 'done', needsReview: false }),
      memory({ memoryId: 'b-new', needsReview: true, createdAt: NOW - DAY }),
      memory({ memoryId: 'a-new', needsReview: true, createdAt: NOW - DAY }),
      memory({ memoryId: 'verified', needsReview: true, userVerified: true }),
      prunedVersion(memory({ memoryId: 'pruned', needsReview: true }), 'stale', NOW),
    ]);
    expect(queued.map((m) => m.memoryId)).toEqual(['a-new', 'b-new', 'old']);
  });
});

describe('reviewReason', () => {
  it('should say why a memory waits: inferred by the observer, or flagged by a person', () => {
    expect(reviewReason({ source: 'observer_inferred' })).toContain('inferred by the observer');
    expect(reviewReason({ source: 'agent_explicit' })).toContain('flagged for review');
  });
});
