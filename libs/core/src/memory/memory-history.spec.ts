import { describe, expect, it } from 'vitest';
import { applyFeedback, parseFeedback } from '../retrieval/memory-feedback';
import { DAY, memory, NOW, SCOPE } from '../retrieval/testing/fixtures';
import { memoryHistory, memoryVersionChanges, memoryVersionReasons } from './memory-history';
import { prunedVersion } from './pruning';
import { commitFileChanges, reviseForFileChanges } from './staleness';
import { SUPERSESSION_RULE, supersededVersion, withSupersedesRelation } from './supersession';

const base = memory({
  memoryId: 'm-1',
  content: 'Token refresh must hold the session mutex',
  relatedFiles: ['src/auth/session.ts'],
  tags: ['distilled', 'trigger:episode_closed'],
});

describe('memoryVersionChanges', () => {
  it('should say a first version creates the memory and a tombstone deletes it', () => {
    expect(memoryVersionChanges(null, base)).toEqual([{ field: 'created', from: null, to: 'm-1' }]);
    expect(memoryVersionChanges(base, null)).toEqual([{ field: 'deleted', from: 'm-1', to: null }]);
  });

  it('should find nothing between two versions that differ only in access counts', () => {
    const accessed = { ...base, accessCount: 9, lastAccessedAt: NOW + DAY, eventId: 'e-2' };
    expect(memoryVersionChanges(base, accessed)).toEqual([]);
  });

  it('should name content, confidence and staleAt with their values before and after', () => {
    const next = { ...base, content: 'Refresh under the mutex', confidence: 0.4, staleAt: NOW };
    expect(memoryVersionChanges(base, next)).toEqual([
      { field: 'content', from: base.content, to: 'Refresh under the mutex' },
      { field: 'confidence', from: 0.8, to: 0.4 },
      { field: 'staleAt', from: null, to: NOW },
    ]);
  });

  it('should list what a rename adds to and drops from relatedFiles and tags', () => {
    const changes = commitFileChanges(
      {
        ...SCOPE,
        eventId: 'commit-1',
        sha: 'abc',
        timestamp: NOW,
        renamedFiles: [{ from: 'src/auth/session.ts', to: 'src/auth/sessions.ts' }],
        deletedFiles: [],
      },
      null,
    )!;
    const renamed = reviseForFileChanges(base, changes)!;
    const found = memoryVersionChanges(base, renamed);
    expect(found.map((c) => c.field)).toEqual(['relatedFiles', 'tags']);
    expect(found[0]).toMatchObject({
      added: ['src/auth/sessions.ts'],
      removed: ['src/auth/session.ts'],
    });
    expect(found[1]).toMatchObject({ added: ['renamed-from:src/auth/session.ts'], removed: [] });
    expect(memoryVersionReasons(base, renamed)).toEqual(['file renamed from src/auth/session.ts']);
  });

  it('should show a supersession on both sides: the relation and the demotion', () => {
    const newer = memory({ memoryId: 'm-2', createdAt: NOW, content: 'no longer a mutex' });
    const demoted = supersededVersion(base, newer)!;
    expect(memoryVersionChanges(base, demoted).map((c) => c.field)).toEqual(['staleAt', 'tags']);
    expect(memoryVersionReasons(base, demoted)).toEqual(['superseded by m-2']);
    const withRelation = withSupersedesRelation(newer, 'm-1', SUPERSESSION_RULE);
    expect(memoryVersionChanges(newer, withRelation)).toEqual([
      {
        field: 'relations',
        from: [],
        to: ['supersedes:m-1'],
        added: ['supersedes:m-1'],
        removed: [],
      },
    ]);
    expect(memoryVersionReasons(newer, withRelation)).toEqual(['supersedes m-1']);
  });

  it("should tell a person's confirmation, correction and flag from the flags they set", () => {
    const request = (action: string, extra: Record<string, string> = {}) =>
      parseFeedback({ ...SCOPE, memoryId: 'm-1', action, ...extra });
    const confirmed = applyFeedback(base, request('confirm'), NOW);
    expect(memoryVersionReasons(base, confirmed)).toEqual(['confirmed by a person (feedback)']);
    const byAlice = applyFeedback(base, request('confirm', { userId: 'alice' }), NOW);
    expect(memoryVersionReasons(base, byAlice)).toEqual([
      'confirmed by a person (feedback)',
      'written by alice',
    ]);
    const corrected = applyFeedback(
      base,
      request('correct', { reason: 'inaccurate', correctedContent: 'Use the refresh lock' }),
      NOW,
    );
    expect(memoryVersionReasons(base, corrected)).toEqual(['corrected by a person (feedback)']);
    const flagged = applyFeedback(base, request('flag_wrong'), NOW);
    expect(memoryVersionReasons(base, flagged)).toEqual([
      'flagged wrong (feedback): back to review',
    ]);
    const outdated = applyFeedback(base, request('correct', { reason: 'outdated' }), NOW);
    expect(memoryVersionReasons(base, outdated)).toEqual([
      'marked stale (feedback: outdated, or its files are gone)',
    ]);
  });

  it('should give the pruning reason on the pruned version and on the tombstone after it', () => {
    const pruned = prunedVersion(base, 'stale', NOW);
    expect(memoryVersionReasons(base, pruned)).toEqual(['pruned (stale)']);
    expect(memoryVersionReasons(base, { ...pruned, userId: 'tim' })).toEqual([
      'pruned (stale)',
      'written by tim',
    ]);
    expect(memoryVersionReasons(pruned, null)).toEqual(['deleted after pruning (stale)']);
    expect(memoryVersionReasons(base, null)).toEqual([
      'deleted (a tombstone: Feedback DELETE, or a duplicate of another memory)',
    ]);
  });
});

describe('memoryHistory', () => {
  it('should diff each version against the one before, in log order', () => {
    const pruned = prunedVersion(base, 'stale', NOW);
    const history = memoryHistory([
      { partition: 1, offset: 3, timestamp: null, memory: base },
      { partition: 1, offset: 7, timestamp: null, memory: pruned },
      { partition: 1, offset: 8, timestamp: NOW + 5, memory: null },
    ]);
    expect(history.map((e) => e.changes.map((c) => c.field))).toEqual([
      ['created'],
      ['staleAt', 'tags'],
      ['deleted'],
    ]);
    expect(history[0].reasons).toEqual([
      'created (source observer_inferred, trigger episode_closed)',
    ]);
    expect(history.map((e) => e.timestamp)).toEqual([base.timestamp, NOW, NOW + 5]);
    expect(history.map((e) => e.source)).toEqual(['log', 'log', 'log']);
  });

  it('should still show a deletion whose earlier versions were compacted away', () => {
    const [entry] = memoryHistory([{ partition: 0, offset: 0, timestamp: null, memory: null }]);
    expect(entry.changes).toEqual([{ field: 'deleted', from: null, to: null }]);
    expect(entry.reasons[0]).toMatch(/compacted away/);
  });
});
