import { describe, expect, it } from 'vitest';
import type { HookProject } from './claude-code-hooks';
import {
  DELETED_FILES_GIT_ARGS,
  FILES_GONE_MANIFEST_INTERVAL_MS,
  filesGoneManifestDue,
  filesInWorkingTree,
  hookFileManifest,
  MAX_FILE_MANIFEST_CHARS,
  parseFileManifest,
} from './file-manifest-hook';

const PROJECT: HookProject = {
  tenantId: 'acme',
  projectId: 'api',
  projectRoot: '/home/dev/api',
  agentId: 'claude-code',
  userId: null,
  gitBranch: 'main',
  gitHeadSha: 'a'.repeat(40),
};

describe('parseFileManifest', () => {
  it('should read NUL-separated paths verbatim, normalised, once each', () => {
    const output = [
      'src/a.ts',
      'src/a.ts',
      'with\nnewline.ts',
      'src\\win.ts',
      '../out.ts',
      '',
    ].join('\0');
    expect(parseFileManifest(output)).toEqual(['src/a.ts', 'with\nnewline.ts', 'src/win.ts']);
    expect(parseFileManifest('')).toEqual([]);
  });
});

describe('hookFileManifest', () => {
  it('should derive the eventId from the session and HEAD', () => {
    const a = hookFileManifest({ session_id: 's1' }, PROJECT, ['src/a.ts'], 1_000);
    const again = hookFileManifest({ session_id: 's1' }, PROJECT, ['src/b.ts'], 2_000);
    const other = hookFileManifest({ session_id: 's2' }, PROJECT, ['src/a.ts'], 1_000);
    expect(a).toMatchObject({
      type: 'FileManifest',
      tenantId: 'acme',
      projectId: 'api',
      sessionId: 's1',
      headSha: PROJECT.gitHeadSha,
      files: ['src/a.ts'],
      timestamp: 1_000,
    });
    expect(again!.eventId).toBe(a!.eventId);
    expect(other!.eventId).not.toBe(a!.eventId);
  });

  it('should refuse a list longer than one Kafka record rather than publish part of it', () => {
    const path = `src/${'x'.repeat(96)}.ts`;
    const fits = Array.from(
      { length: Math.floor(MAX_FILE_MANIFEST_CHARS / 110) },
      (_, i) => `${i}${path}`,
    );
    expect(hookFileManifest({ session_id: 's1' }, PROJECT, fits, 0)!.files).toHaveLength(
      fits.length,
    );
    const tooMany = Array.from({ length: 10_000 }, (_, i) => `${i}${path}`);
    expect(() => hookFileManifest({ session_id: 's1' }, PROJECT, tooMany, 0)).toThrow(
      /10000 tracked files .* exceed one FileManifest/,
    );
  });

  it('should be null without a HEAD', () => {
    expect(hookFileManifest({ session_id: 's1' }, { ...PROJECT, gitHeadSha: null }, [], 0)).toBe(
      null,
    );
  });
});

describe('the files-gone manifest (a working-tree check found a memory whose files are all gone)', () => {
  it('should get a new eventId at each time, the same one for the same time', () => {
    const start = hookFileManifest({ session_id: 's1' }, PROJECT, ['src/a.ts'], 1_000);
    const gone = (at: number) =>
      hookFileManifest({ session_id: 's1' }, PROJECT, ['src/a.ts'], at, 'files-gone')!.eventId;
    expect(gone(1_000)).not.toBe(start!.eventId);
    expect(gone(1_000)).toBe(gone(1_000));
    expect(gone(2_000)).not.toBe(gone(1_000));
  });

  it('should list the tracked files minus the ones deleted from the working tree', () => {
    expect(DELETED_FILES_GIT_ARGS).toEqual([
      '--no-pager',
      'ls-files',
      '-z',
      '--full-name',
      '--deleted',
    ]);
    expect(filesInWorkingTree(['src/a.ts', 'src/x.ts', 'src/y.ts'], ['src/x.ts'])).toEqual([
      'src/a.ts',
      'src/y.ts',
    ]);
    expect(filesInWorkingTree(['src/a.ts'], [])).toEqual(['src/a.ts']);
  });

  it('should be due at most once per interval', () => {
    const t = 1_000_000_000;
    expect(filesGoneManifestDue(null, t)).toBe(true);
    expect(filesGoneManifestDue(t, t)).toBe(false);
    expect(filesGoneManifestDue(t, t + FILES_GONE_MANIFEST_INTERVAL_MS - 1)).toBe(false);
    expect(filesGoneManifestDue(t, t + FILES_GONE_MANIFEST_INTERVAL_MS)).toBe(true);
    expect(FILES_GONE_MANIFEST_INTERVAL_MS).toBe(600_000);
    // A clock set back a day does not hold the manifest back for a day.
    expect(filesGoneManifestDue(t + 86_400_000, t)).toBe(true);
    expect(filesGoneManifestDue(t + 1_000, t)).toBe(false);
  });
});
