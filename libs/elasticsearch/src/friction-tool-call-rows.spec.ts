import { describe, expect, it } from 'vitest';
import {
  recurringFailureDays,
  retryLoopDays,
  retryLoopsOf,
  type TurnDay,
} from './friction-tool-call-rows';

// The folding of composite buckets into the embedded rows where the contract data does not
// reach: a turn whose failures straddle midnight UTC (two buckets, one turn), and samples.
const SETTINGS = { minRetries: 3, minSessionsPerFinding: 2, maxEvidence: 2 };

function bucket(
  sessionId: string,
  day: string,
  count: number,
  eventId: string,
  promptId = 1,
): TurnDay {
  const at = Date.parse(`${day}T12:00:00Z`);
  return {
    key: {
      tenantId: 't',
      projectId: 'p',
      toolName: 'Bash',
      command: 'make',
      sessionId,
      promptId,
      day,
    },
    measured: {
      count,
      durationMs: 10 * count,
      tokens: count,
      firstAt: at,
      lastAt: at + 1,
      eventIds: [eventId],
      agentIds: [`agent-${sessionId}`],
    },
  };
}

describe('retryLoopsOf', () => {
  it('should count a turn split over two days once, and not a turn below the retries', () => {
    const buckets = [
      bucket('s1', '2026-11-20', 2, 'e3'),
      bucket('s1', '2026-11-21', 1, 'e1'),
      bucket('s2', '2026-11-21', 3, 'e2'),
      // Two failures in each of two turns of s3: no loop.
      bucket('s3', '2026-11-21', 2, 'e0', 1),
      bucket('s3', '2026-11-21', 2, 'e9', 2),
    ];
    const { rows, turns } = retryLoopsOf(buckets, SETTINGS);
    expect(rows).toEqual([
      {
        tenantId: 't',
        projectId: 'p',
        toolName: 'Bash',
        command: 'make',
        sessions: 2,
        occurrences: 6,
        durationMs: 60,
        tokens: 6,
        firstAt: Date.parse('2026-11-20T12:00:00Z'),
        lastAt: Date.parse('2026-11-21T12:00:00Z') + 1,
        sessionIds: ['s1', 's2'],
        // Each session's smallest event, the smallest of those.
        eventIds: ['e1', 'e2'],
        agentIds: ['agent-s1', 'agent-s2'],
      },
    ]);
    expect(retryLoopDays(buckets, turns)).toEqual([
      { day: '2026-11-20', count: 2, kind: 'tool-misuse' },
      { day: '2026-11-21', count: 4, kind: 'tool-misuse' },
    ]);
  });

  it('should keep no habit below the sessions threshold', () => {
    const { rows, turns } = retryLoopsOf([bucket('s1', '2026-11-20', 5, 'e1')], SETTINGS);
    expect(rows).toEqual([]);
    expect(turns.size).toBe(0);
  });
});

describe('recurringFailureDays', () => {
  it('should count the failures of patterns in enough sessions, per day', () => {
    const key = (errorPattern: string, sessionId: string, day: string) => ({
      tenantId: 't',
      toolName: 'Bash',
      errorPattern,
      sessionId,
      day,
    });
    expect(
      recurringFailureDays(
        [
          { key: key('a', 's1', '2026-11-21'), count: 2 },
          { key: key('a', 's2', '2026-11-20'), count: 1 },
          { key: key('b', 's1', '2026-11-20'), count: 7 },
        ],
        2,
      ),
    ).toEqual([
      { day: '2026-11-20', count: 1, kind: 'recurring-failure' },
      { day: '2026-11-21', count: 2, kind: 'recurring-failure' },
    ]);
  });
});
