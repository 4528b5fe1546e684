import { decideCrossThreadLinkAlgorithmically, tuningReport } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { threadLinkRecord } from './episode-records';
import { toLinkDecisionRecord } from './thread-linker';

const AT = Date.UTC(2026, 10, 23, 9);
const HOUR = 3_600_000;

function decision(text: string) {
  const { record } = decideCrossThreadLinkAlgorithmically({
    opening: { threadId: 'new', tenantId: 't', userId: 'u', openedAt: AT, text },
    candidates: [
      {
        threadId: 'old',
        tenantId: 't',
        userId: 'u',
        lastActivityAt: AT - 2 * HOUR,
        recentTurns: ['fix the token refresh race in src/auth/refresh.ts during logout'],
      },
    ],
  });
  if (!record) throw new Error('expected a decision');
  return record;
}

describe('toLinkDecisionRecord', () => {
  it('should give back the core decision a published ThreadLinkDecision was made from', () => {
    const record = decision('the token refresh race in src/auth/refresh.ts came back');
    const published = threadLinkRecord(record, {
      projectId: 'p',
      sessionId: 's',
      newEpisodeId: 'e2',
      linkedEpisodeId: 'e1',
    });
    expect(toLinkDecisionRecord(published)).toEqual(record);
  });

  it('should feed the tuning report with the recorded outcomes', () => {
    const link = { ...decision('the token refresh race in src/auth/refresh.ts came back') };
    const noLink = decision('plan the quarterly hiring budget for the design team');
    const context = { projectId: 'p', sessionId: 's', newEpisodeId: 'e', linkedEpisodeId: null };
    const published = [
      { ...threadLinkRecord(link, context), outcome: 'CORRECT' as const, outcomeAt: AT },
      { ...threadLinkRecord(noLink, context), outcome: 'INCORRECT' as const, outcomeAt: AT },
    ];
    const report = tuningReport(published.map(toLinkDecisionRecord));
    expect(link.decision).toBe('LINK');
    expect(noLink.decision).toBe('NO_LINK');
    expect(report).toMatchObject({ decisions: 2, withOutcome: 2, related: 2, unrelated: 0 });
    expect(report.current.falseNegativeRate).toBe(0.5);
    expect(report.proposedThreshold).toBeLessThan(noLink.algorithmic.score);
  });
});
