import { describe, expect, it } from 'vitest';
import { pendingReviewLine, withPendingReviewLine } from './hook-context-output';

describe('pendingReviewLine', () => {
  it('should say nothing when neither proposals nor inferred memories await review', () => {
    expect(pendingReviewLine({ proposals: 0, memories: 0 })).toBe('');
    expect(pendingReviewLine({ proposals: -1, memories: Number.NaN })).toBe('');
    expect(withPendingReviewLine('ctx', { proposals: 0, memories: 0 })).toBe('ctx');
  });

  it('should name both queues in one line', () => {
    expect(pendingReviewLine({ proposals: 2, memories: 3 })).toBe(
      'Engram: 2 MEMORY.md proposals and 3 inferred memories await review for this project ' +
        '(`engram review` lists them).',
    );
  });

  it('should name only the queue that has items, in the singular for one', () => {
    expect(pendingReviewLine({ proposals: 0, memories: 1 })).toBe(
      'Engram: 1 inferred memory awaits review for this project (`engram review` lists them).',
    );
    expect(pendingReviewLine({ proposals: 1, memories: 0 })).toBe(pendingReviewLine(1));
  });

  it('should say "100+" when the bounded memory count came back full', () => {
    const line = pendingReviewLine({ proposals: 0, memories: 100, memoriesCapped: true });
    expect(line).toContain('100+ inferred memories await review');
  });

  it('should put the line a blank line after the context', () => {
    const pending = { proposals: 0, memories: 4 };
    expect(withPendingReviewLine('ctx', pending)).toBe(`ctx\n\n${pendingReviewLine(pending)}`);
    expect(withPendingReviewLine(' ', pending)).toBe(pendingReviewLine(pending));
  });
});
