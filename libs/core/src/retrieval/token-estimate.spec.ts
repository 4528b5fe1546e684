import { describe, expect, it } from 'vitest';
import { assignCitationIds } from './citations';
import { clipToTokens, estimateTokens } from './token-estimate';

describe('token estimate', () => {
  it('should round characters / 4 up, counting code points', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('😀😀😀😀')).toBe(1); // 4 code points, 8 UTF-16 units
    expect(estimateTokens('abcdef', 2)).toBe(3);
  });

  it('should clip to a token count with an ellipsis, never splitting a surrogate pair', () => {
    expect(clipToTokens('abcdefgh', 2)).toEqual({ text: 'abcdefgh', clipped: false });
    expect(clipToTokens('abcdefghi', 2)).toEqual({ text: 'abcdefg…', clipped: true });
    expect(clipToTokens('😀'.repeat(10), 1)).toEqual({ text: '😀😀😀…', clipped: true });
    expect(estimateTokens(clipToTokens('x'.repeat(1_000), 7).text)).toBe(7);
  });
});

describe('assignCitationIds', () => {
  it('should cite by kind and the first 8 characters of the source id', () => {
    expect(
      assignCitationIds([
        { kind: 'memory', sourceId: '3b9d2f0e-1a2b-5c3d-9e4f-5a6b7c8d9e0f' },
        { kind: 'current_thread', sourceId: 'e1' },
      ]),
    ).toEqual(['mem-3b9d2f0e', 'turn-e1']);
  });

  it('should fall back to full ids when short forms collide, whatever the order', () => {
    const a = { kind: 'memory' as const, sourceId: 'abcdefgh-1' };
    const b = { kind: 'memory' as const, sourceId: 'abcdefgh-2' };
    const c = { kind: 'work_state' as const, sourceId: 'abcdefgh-3' };
    expect(assignCitationIds([a, b, c])).toEqual([
      'mem-abcdefgh-1',
      'mem-abcdefgh-2',
      'ws-abcdefgh',
    ]);
    expect(assignCitationIds([b, a])).toEqual(['mem-abcdefgh-2', 'mem-abcdefgh-1']);
  });
});
