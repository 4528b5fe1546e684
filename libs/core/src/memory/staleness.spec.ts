import { describe, expect, it } from 'vitest';
import { memoriesByFileOn } from '../ports/memories-by-file';
import { memory, NOW, SCOPE } from '../retrieval/testing/fixtures';
import {
  commitFileChanges,
  pathsChangedBy,
  reviseForFileChanges,
  reviseMemoriesForCommit,
  type CommitFileChanges,
} from './staleness';

const SESSION = 'src/auth/session.ts';
const SESSIONS = 'src/auth/sessions.ts';
const TOKEN = 'src/auth/token.ts';
const LEGACY = 'src/auth/legacy.ts';

function commit(
  renamedFiles: { from: string; to: string }[],
  deletedFiles: string[],
): Parameters<typeof commitFileChanges>[0] {
  return {
    eventId: 'commit-1',
    ...SCOPE,
    sha: 'abc123',
    timestamp: NOW,
    renamedFiles,
    deletedFiles,
  };
}

function changes(renamed: { from: string; to: string }[], deleted: string[]): CommitFileChanges {
  return commitFileChanges(commit(renamed, deleted), null)!;
}

describe('commitFileChanges', () => {
  it('should normalise the paths and drop the ones outside the project', () => {
    const result = commitFileChanges(
      commit(
        [
          { from: './src/auth/session.ts', to: 'src\\auth\\sessions.ts' },
          { from: '../outside.ts', to: 'src/inside.ts' },
          { from: 'src/same.ts', to: './src/same.ts' },
        ],
        ['src/a.ts', './src/a.ts', '/abs/elsewhere.ts'],
      ),
      null,
    );
    expect(result).toEqual({
      eventId: 'commit-1',
      ...SCOPE,
      sha: 'abc123',
      at: NOW,
      renamed: [{ from: SESSION, to: SESSIONS }],
      deleted: ['src/a.ts'],
    });
    expect(pathsChangedBy(result!)).toEqual([SESSION, 'src/a.ts']);
  });

  it('should be null for a commit that only changed files', () => {
    expect(commitFileChanges(commit([], []), null)).toBeNull();
  });
});

describe('reviseForFileChanges', () => {
  it('should move a memory to the renamed path, keeping its id and the old path as history', () => {
    const before = memory({
      memoryId: 'm1',
      relatedFiles: [SESSION, TOKEN],
      tags: ['observer'],
      sourceEventIds: ['e0'],
    });
    const next = reviseForFileChanges(before, changes([{ from: SESSION, to: SESSIONS }], []))!;
    expect(next).toMatchObject({
      memoryId: 'm1',
      relatedFiles: [SESSIONS, TOKEN],
      tags: ['observer', `renamed-from:${SESSION}`],
      sourceEventIds: ['e0', 'commit-1'],
      staleAt: null,
      timestamp: NOW,
      content: before.content,
      confidence: before.confidence,
    });
    expect(next.eventId).not.toBe(before.eventId);
    // Deterministic: the same commit on the same version derives the same next version.
    expect(reviseForFileChanges(before, changes([{ from: SESSION, to: SESSIONS }], []))).toEqual(
      next,
    );
    // Idempotent: applied again to the next version, nothing changes.
    expect(reviseForFileChanges(next, changes([{ from: SESSION, to: SESSIONS }], []))).toBeNull();
  });

  it('should match a memory that names the file by absolute path', () => {
    const before = memory({ memoryId: 'm1', relatedFiles: [`/home/me/repo/${SESSION}`] });
    const next = reviseForFileChanges(before, changes([{ from: SESSION, to: SESSIONS }], []));
    expect(next?.relatedFiles).toEqual([SESSIONS]);
  });

  it('should mark a memory stale when its only files were deleted, keeping its paths', () => {
    const before = memory({ memoryId: 'm1', relatedFiles: [LEGACY] });
    const next = reviseForFileChanges(before, changes([], [LEGACY]))!;
    expect(next).toMatchObject({ relatedFiles: [LEGACY], staleAt: NOW, tags: [] });
    // Already stale: a replay of the deletion changes nothing.
    expect(reviseForFileChanges(next, changes([], [LEGACY]))).toBeNull();
  });

  it('should keep a memory live for the files that remain, dropping the deleted ones', () => {
    const before = memory({ memoryId: 'm1', relatedFiles: [LEGACY, TOKEN] });
    const next = reviseForFileChanges(before, changes([], [LEGACY]))!;
    expect(next).toMatchObject({
      relatedFiles: [TOKEN],
      staleAt: null,
      tags: [`file-deleted:${LEGACY}`],
    });
  });

  it('should keep a memory live when one file is deleted and the other renamed', () => {
    const before = memory({ memoryId: 'm1', relatedFiles: [LEGACY, SESSION] });
    const next = reviseForFileChanges(
      before,
      changes([{ from: SESSION, to: SESSIONS }], [LEGACY]),
    )!;
    expect(next).toMatchObject({ relatedFiles: [SESSIONS], staleAt: null });
  });

  it('should leave memories of other projects, without files, or about other files alone', () => {
    const change = changes([{ from: SESSION, to: SESSIONS }], [LEGACY]);
    expect(
      reviseForFileChanges(memory({ memoryId: 'a', relatedFiles: [TOKEN] }), change),
    ).toBeNull();
    expect(reviseForFileChanges(memory({ memoryId: 'b' }), change)).toBeNull();
    expect(
      reviseForFileChanges(
        memory({ memoryId: 'c', projectId: 'other', relatedFiles: [SESSION] }),
        change,
      ),
    ).toBeNull();
  });

  it('should revise only the affected memories of a list, in order', () => {
    const memories = [
      memory({ memoryId: 'a', relatedFiles: [TOKEN] }),
      memory({ memoryId: 'b', relatedFiles: [LEGACY] }),
      memory({ memoryId: 'c', relatedFiles: [SESSION] }),
    ];
    const revised = reviseMemoriesForCommit(
      memories,
      changes([{ from: SESSION, to: SESSIONS }], [LEGACY]),
    );
    expect(revised.map((m) => [m.memoryId, m.relatedFiles, m.staleAt])).toEqual([
      ['b', [LEGACY], NOW],
      ['c', [SESSIONS], null],
    ]);
  });
});

describe('memoriesByFileOn', () => {
  it('should refresh the view and return the project memories naming the paths', async () => {
    let refreshed = 0;
    const all = [
      memory({ memoryId: 'a', relatedFiles: [SESSION] }),
      memory({ memoryId: 'b', relatedFiles: [TOKEN] }),
      memory({ memoryId: 'c', projectId: 'other', relatedFiles: [SESSION] }),
    ];
    const lookup = memoriesByFileOn({
      refresh: () => Promise.resolve((refreshed += 1)),
      values: () => all,
    });
    const found = await lookup.memoriesAbout(SCOPE, [SESSION]);
    expect(found.map((m) => m.memoryId)).toEqual(['a']);
    expect(refreshed).toBe(1);
    expect(await lookup.memoriesAbout(SCOPE, [])).toEqual([]);
    expect(refreshed).toBe(1);
  });
});
