import { describe, expect, it } from 'vitest';
import { normaliseFilePath, sameFile, storedPathForms } from './file-paths';

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

describe('storedPathForms', () => {
  it('should list the path and, for an absolute one, every relative tail that sameFile accepts', () => {
    const forms = storedPathForms('/home/me/repo/./src/auth.ts');
    expect(forms).toEqual(
      expect.arrayContaining(['/home/me/repo/src/auth.ts', 'src/auth.ts', 'auth.ts']),
    );
    for (const form of forms.filter((f) => !f.startsWith('/'))) {
      expect(sameFile('/home/me/repo/src/auth.ts', form)).toBe(true);
    }
  });

  it('should keep a relative path as it is, normalised', () => {
    expect(storedPathForms('./src/auth.ts')).toEqual(['./src/auth.ts', 'src/auth.ts']);
  });
});
