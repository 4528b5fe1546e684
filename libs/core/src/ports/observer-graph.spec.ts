import { describe, expect, it } from 'vitest';
import {
  emptyGraphBatch,
  splitGraphBatch,
  type GraphErrorRow,
  type GraphSessionPairRow,
  type GraphSessionRow,
  type GraphTouchRow,
  type ObserverGraphBatch,
} from './observer-graph';

const scope = { tenantId: 't', projectId: 'p' };
const session = (sessionId: string): GraphSessionRow => ({
  ...scope,
  sessionId,
  agentId: 'a',
  startedAt: 1,
  lastActivityAt: 2,
  endedAt: null,
  toolCalls: 3,
});
const touch = (sessionId: string, path: string): GraphTouchRow => ({
  ...scope,
  sessionId,
  path,
  module: 'src',
  reads: 1,
  edits: 0,
  accesses: 1,
  firstAt: 1,
  lastAt: 1,
});
const pair = (sessionId: string, fileA: string, fileB: string): GraphSessionPairRow => ({
  ...scope,
  sessionId,
  fileA,
  fileB,
  rawCount: 1,
  timeDeltaSumMs: 10,
  timedCount: 1,
  aThenB: 1,
  bThenA: 0,
  sameStep: 0,
  lastObservedAt: 1,
});
const error = (sessionId: string): GraphErrorRow => ({
  ...scope,
  sessionId,
  hash: 'h',
  toolName: 'Bash',
  normalisedError: 'e',
  sampleMessage: 'e',
  occurrences: 1,
  episodes: 1,
  resolvedEpisodes: 0,
  lastResolution: null,
  lastSeenAt: 1,
});

function batchOf(sessionIds: string[]): ObserverGraphBatch {
  return {
    sessions: sessionIds.map(session),
    touches: sessionIds.flatMap((id) => [touch(id, 'a.ts'), touch(id, 'b.ts')]),
    sessionPairs: sessionIds.map((id) => pair(id, 'a.ts', 'b.ts')),
    errors: sessionIds.map(error),
    newlyTouchedFiles: [
      { ...scope, path: 'a.ts' },
      { ...scope, path: 'b.ts' },
    ],
  };
}

const sessionsOf = (batch: ObserverGraphBatch) =>
  new Set(
    [...batch.sessions, ...batch.touches, ...batch.sessionPairs, ...batch.errors].map(
      (row) => row.sessionId,
    ),
  );

describe('splitGraphBatch', () => {
  it('should keep each session whole in one half and lose no row', () => {
    const batch = batchOf(['s3', 's1', 's4', 's2', 's5']);
    const [first, second] = splitGraphBatch(batch)!;
    expect([...sessionsOf(first)].sort()).toEqual(['s1', 's2', 's3']);
    expect([...sessionsOf(second)].sort()).toEqual(['s4', 's5']);
    for (const kind of ['sessions', 'touches', 'sessionPairs', 'errors'] as const) {
      expect(first[kind].length + second[kind].length).toBe(batch[kind].length);
    }
    expect(first.touches.every((row) => sessionsOf(first).has(row.sessionId))).toBe(true);
  });

  it('should refresh the newly touched files with the second half, once every touch is in', () => {
    const [first, second] = splitGraphBatch(batchOf(['s1', 's2']))!;
    expect(first.newlyTouchedFiles).toEqual([]);
    expect(second.newlyTouchedFiles.map((file) => file.path)).toEqual(['a.ts', 'b.ts']);
  });

  it('should count a session that has only pair or error rows', () => {
    const batch = {
      ...emptyGraphBatch(),
      sessionPairs: [pair('s1', 'a', 'b')],
      errors: [error('s2')],
    };
    const [first, second] = splitGraphBatch(batch)!;
    expect(first.sessionPairs).toHaveLength(1);
    expect(second.errors).toHaveLength(1);
  });

  it('should not split one session', () => {
    expect(splitGraphBatch(batchOf(['only']))).toBeNull();
    expect(splitGraphBatch(emptyGraphBatch())).toBeNull();
  });
});
