import { describe, expect, it } from 'vitest';
import { nextProposalIds, parseProposalId, proposalId } from './proposal-ids';

const NOW = Date.UTC(2026, 1, 17, 23, 59);

describe('proposal ids', () => {
  it('should be p-YYYYMMDD-NNN of the UTC day', () => {
    expect(proposalId(NOW, 1)).toBe('p-20260217-001');
    expect(proposalId(NOW, 42)).toBe('p-20260217-042');
    expect(proposalId(NOW, 1234)).toBe('p-20260217-1234');
    expect(() => proposalId(NOW, 0)).toThrow(RangeError);
  });

  it("should continue after the day's highest sequence, ignoring other days and kinds", () => {
    const existing = [
      'p-20260217-003',
      'p-20260217-010',
      'p-20260216-099',
      'f-20260217-050',
      'junk',
    ];
    expect(nextProposalIds(NOW, existing, 3)).toEqual([
      'p-20260217-011',
      'p-20260217-012',
      'p-20260217-013',
    ]);
    expect(nextProposalIds(NOW, [], 1)).toEqual(['p-20260217-001']);
    expect(nextProposalIds(NOW, existing, 0)).toEqual([]);
  });

  it('should parse its ids back', () => {
    expect(parseProposalId('p-20260217-011')).toEqual({ day: '20260217', sequence: 11 });
    expect(parseProposalId('f-20260217-011')).toBeNull();
  });
});
