import { describe, expect, it } from 'vitest';
import { memoriesByFileOn } from '../ports/memories-by-file';
import { memory, NOW, SCOPE } from '../retrieval/testing/fixtures';
import {
  commitFileChanges,
  manifestFileChanges,
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

describe('manifestFileChanges: the sweep against a FileManifest', () => {
  const manifest = (files: string[], eventId = 'manifest-1') => ({
    eventId,
    ...SCOPE,
    headSha: 'def456',
    timestamp: NOW + 1_000,
    files,
  });
  const only = memory({ memoryId: 'only', relatedFiles: [LEGACY] });
  const some = memory({ memoryId: 'some', relatedFiles: [TOKEN, LEGACY] });
  const kept = memory({ memoryId: 'kept', relatedFiles: ['./src/auth/token.ts'] });
  const other = memory({ memoryId: 'other', projectId: 'other', relatedFiles: [SESSION] });
  const absolute = memory({ memoryId: 'abs', relatedFiles: ['/home/dev/api/src/gone.ts'] });
  const files = ['package.json', TOKEN, 'src\\auth\\index.ts'];

  it("should treat the memories' files missing from the manifest as deleted", () => {
    const changes = manifestFileChanges(manifest(files), [only, some, kept, other], null);
    expect(changes).toEqual({
      eventId: 'manifest-1',
      ...SCOPE,
      sha: 'def456',
      at: NOW + 1_000,
      renamed: [],
      deleted: [LEGACY],
    });
    const revised = reviseMemoriesForCommit([only, some, kept, other], changes!);
    expect(revised.map((m) => [m.memoryId, m.relatedFiles, m.staleAt])).toEqual([
      ['only', [LEGACY], NOW + 1_000],
      ['some', [TOKEN], null],
    ]);
    expect(revised[1].tags).toContain(`file-deleted:${LEGACY}`);
    expect(revised[0].sourceEventIds).toContain('manifest-1');
  });

  it('should be idempotent: the revised memories against the same manifest change nothing', () => {
    const changes = manifestFileChanges(manifest(files), [only, some, kept], null)!;
    const revised = reviseMemoriesForCommit([only, some, kept], changes);
    const byId = new Map([only, some, kept].map((m) => [m.memoryId, m]));
    for (const m of revised) byId.set(m.memoryId, m);
    const again = manifestFileChanges(manifest(files, 'manifest-2'), [...byId.values()], null);
    // The stale memory still names its file (for an explicit search), and is left as it is.
    expect(again?.deleted).toEqual([LEGACY]);
    expect(reviseMemoriesForCommit([...byId.values()], again!)).toEqual([]);
    // Deterministic: the same manifest and memories give the same next versions.
    expect(reviseMemoriesForCommit([only, some, kept], changes)).toEqual(revised);
  });

  it('should place absolute paths with the root, and never take an unplaceable one for absent', () => {
    expect(manifestFileChanges(manifest(files), [absolute], null)).toBeNull();
    expect(manifestFileChanges(manifest(files), [absolute], '/home/dev/api')?.deleted).toEqual([
      '/home/dev/api/src/gone.ts',
    ]);
    expect(manifestFileChanges(manifest(['src/gone.ts']), [absolute], '/home/dev/api')).toBeNull();
  });

  it('should sweep nothing for an empty manifest or when every file is present', () => {
    expect(manifestFileChanges(manifest([]), [only, some], null)).toBeNull();
    expect(manifestFileChanges(manifest(files), [kept], null)).toBeNull();
  });

  it('should handle a manifest of 100k files in linear time', () => {
    const big = Array.from({ length: 100_000 }, (_, i) => `src/module${i % 100}/file${i}.ts`);
    const many = Array.from({ length: 2_000 }, (_, i) =>
      memory({ memoryId: `m${i}`, relatedFiles: [`src/module${(i * 75) % 100}/file${i * 75}.ts`] }),
    );
    const started = performance.now();
    const changes = manifestFileChanges(manifest(big), many, null);
    expect(performance.now() - started).toBeLessThan(2_000);
    // file0 … file99975 are listed; i * 75 >= 100000 from i = 1334 on.
    expect(changes?.deleted).toHaveLength(2_000 - 1_334);
  });
});

describe('memoriesByFileOn: memoriesWithFiles', () => {
  it('should return the project memories naming any file, one refresh at a time', async () => {
    let running = 0;
    let overlapped = false;
    const all = [
      memory({ memoryId: 'a', relatedFiles: [SESSION] }),
      memory({ memoryId: 'b', relatedFiles: [] }),
      memory({ memoryId: 'c', projectId: 'other', relatedFiles: [SESSION] }),
    ];
    const lookup = memoriesByFileOn({
      refresh: async () => {
        running += 1;
        if (running > 1) overlapped = true;
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
      },
      values: () => all,
    });
    const [withFiles, about] = await Promise.all([
      lookup.memoriesWithFiles(SCOPE),
      lookup.memoriesAbout(SCOPE, [SESSION]),
    ]);
    expect(withFiles.map((m) => m.memoryId)).toEqual(['a']);
    expect(about.map((m) => m.memoryId)).toEqual(['a']);
    expect(overlapped).toBe(false);
  });
});
