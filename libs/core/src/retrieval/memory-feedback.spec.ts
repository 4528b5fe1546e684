import { describe, expect, it } from 'vitest';
import { applyFeedback, feedbackDeletes, parseFeedback } from './memory-feedback';
import { InvalidRecallRequestError } from './retrieval-errors';
import { memory, NOW, SCOPE } from './testing/fixtures';

describe('memory feedback', () => {
  const stored = memory({ memoryId: 'm-1', confidence: 0.7, needsReview: true });
  const apply = (input: object) =>
    applyFeedback(stored, parseFeedback({ ...SCOPE, memoryId: 'm-1', action: '', ...input }), NOW);

  it('should verify a confirmed or corrected memory, at least 0.9 confident, as a new event', () => {
    const confirmed = apply({ action: 'confirm', userId: 'alice' });
    expect(confirmed).toMatchObject({
      userVerified: true,
      needsReview: false,
      confidence: 0.9,
      userId: 'alice',
      timestamp: NOW,
      memoryId: 'm-1',
    });
    expect(confirmed.eventId).not.toBe(stored.eventId);
    const corrected = apply({ action: 'correct', reason: 'inaccurate', correctedContent: ' New ' });
    expect(corrected).toMatchObject({ content: 'New', userVerified: true, confidence: 0.9 });
  });

  it('should mark an outdated memory stale and halve a wrong one, back to review', () => {
    expect(apply({ action: 'correct', reason: 'outdated' })).toMatchObject({
      staleAt: NOW,
      content: stored.content,
    });
    expect(apply({ action: 'flag_wrong' })).toMatchObject({
      confidence: 0.35,
      needsReview: true,
      userVerified: false,
    });
  });

  it('should tell deletions apart and refuse incomplete requests, naming the field', () => {
    const parse = (input: object) =>
      parseFeedback({ ...SCOPE, memoryId: 'm-1', action: '', ...input });
    expect(feedbackDeletes(parse({ action: 'delete' }))).toBe(true);
    expect(
      feedbackDeletes(
        parse({ action: 'correct', reason: 'duplicate', duplicateOfMemoryId: 'm-2' }),
      ),
    ).toBe(true);
    const field = (input: object) => {
      try {
        parse(input);
      } catch (error) {
        return error instanceof InvalidRecallRequestError ? error.field : 'other';
      }
      return null;
    };
    expect(field({})).toBe('action');
    expect(field({ action: 'praise' })).toBe('action');
    expect(field({ action: 'correct' })).toBe('reason');
    expect(field({ action: 'correct', reason: 'too_specific' })).toBe('correctedContent');
    expect(field({ action: 'correct', reason: 'duplicate', duplicateOfMemoryId: 'm-1' })).toBe(
      'duplicateOfMemoryId',
    );
    expect(field({ action: 'confirm', memoryId: ' ' })).toBe('memoryId');
    // A correction becomes a memory's content: bounded like Remember (issue #19).
    const huge = { action: 'correct', reason: 'inaccurate', correctedContent: 'z'.repeat(5e6) };
    expect(field(huge)).toBe('correctedContent');
  });
});
