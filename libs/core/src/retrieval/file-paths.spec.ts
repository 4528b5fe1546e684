import { describe, expect, it } from 'vitest';
import { normaliseFilePath, sameFile } from './file-paths';

describe('file paths', () => {
  it('should normalise separators, ./ and duplicate slashes', () => {
    expect(normaliseFilePath(' ./src\\auth//refresh.ts ')).toBe('src/auth/refresh.ts');
    expect(normaliseFilePath('src/./a.ts')).toBe('src/a.ts');
    expect(normaliseFilePath('src/')).toBe('src');
  });

  it('should match an absolute path to the repository-relative one it ends with', () => {
    expect(sameFile('/home/dev/repo/src/auth/refresh.ts', 'src/auth/refresh.ts')).toBe(true);
    expect(sameFile('src/auth/refresh.ts', './src/auth/refresh.ts')).toBe(true);
  });

  it('should not match partial names or two different absolute paths', () => {
    expect(sameFile('/repo/src/xrefresh.ts', 'refresh.ts')).toBe(false);
    expect(sameFile('/a/src/x.ts', '/b/src/x.ts')).toBe(false);
    expect(sameFile('', '')).toBe(false);
    expect(sameFile('packages/a/src/index.ts', 'src/index.ts')).toBe(false); // both repo-relative
  });

  it('should treat a Windows drive path as absolute', () => {
    expect(sameFile('C:\\work\\repo\\src\\x.ts', 'src/x.ts')).toBe(true);
  });
});
