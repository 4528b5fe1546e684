import { describe, expect, it } from 'vitest';
import { MisconfigurationError } from '../errors/engram-error';
import { moduleOf, normaliseProjectPath, ProjectPathError } from './project-paths';

const ROOT = '/home/dev/repo';

function rejection(path: string, root: string | null = ROOT): string {
  try {
    normaliseProjectPath(path, root);
  } catch (error) {
    if (error instanceof ProjectPathError) return error.reason;
    throw error;
  }
  throw new Error(`${path} was accepted`);
}

describe('normaliseProjectPath', () => {
  it('should make absolute paths inside the root relative to it', () => {
    expect(normaliseProjectPath('/home/dev/repo/src/auth/token.ts', ROOT)).toBe(
      'src/auth/token.ts',
    );
    expect(normaliseProjectPath('/home/dev/repo/./src//a/../b.ts', `${ROOT}/`)).toBe('src/b.ts');
  });

  it('should resolve relative paths and drop a leading ./', () => {
    expect(normaliseProjectPath('./src/auth/../api/x.ts', ROOT)).toBe('src/api/x.ts');
    expect(normaliseProjectPath('src\\auth\\token.ts', ROOT)).toBe('src/auth/token.ts');
  });

  it('should accept Windows paths, with the drive letter compared case-insensitively', () => {
    expect(normaliseProjectPath('c:\\Repo\\src\\a.ts', 'C:\\Repo')).toBe('src/a.ts');
    expect(rejection('D:\\Repo\\src\\a.ts', 'C:\\Repo')).toBe('escapes_root');
  });

  it('should give the root itself as "."', () => {
    expect(normaliseProjectPath(ROOT, ROOT)).toBe('.');
    expect(normaliseProjectPath('src/..', ROOT)).toBe('.');
  });

  it('should reject paths that escape the root, with a message naming the path and root', () => {
    expect(rejection('../secrets.txt')).toBe('escapes_root');
    expect(rejection('src/../../x')).toBe('escapes_root');
    expect(rejection('/etc/passwd')).toBe('escapes_root');
    expect(rejection('/home/dev/repo/../other/x.ts')).toBe('escapes_root');
    expect(() => normaliseProjectPath('/etc/passwd', ROOT)).toThrow(
      'file path /etc/passwd is outside the project root /home/dev/repo',
    );
  });

  it('should not take a sibling directory sharing the prefix for the root', () => {
    expect(rejection('/home/dev/repo2/src/a.ts')).toBe('escapes_root');
  });

  it('should reject home-relative, empty and NUL paths, and absolute ones without a root', () => {
    expect(rejection('~/.ssh/id_rsa')).toBe('home_relative');
    expect(rejection('  ')).toBe('empty');
    expect(rejection('src/a\0.ts')).toBe('nul_byte');
    expect(rejection('/home/dev/repo/src/a.ts', null)).toBe('no_root');
    expect(normaliseProjectPath('src/a.ts', null)).toBe('src/a.ts');
  });

  it('should refuse a relative project root as misconfiguration', () => {
    expect(() => normaliseProjectPath('/x/a.ts', 'repo')).toThrow(MisconfigurationError);
  });

  it('should mark rejections as not retriable', () => {
    expect(() => normaliseProjectPath('../x', ROOT)).toThrow(
      expect.objectContaining({ code: 'PROJECT_PATH_REJECTED', retriable: false }),
    );
  });
});

describe('moduleOf', () => {
  it('should take the first `depth` directories', () => {
    expect(moduleOf('src/auth/token/refresh.ts', 2)).toBe('src/auth');
    expect(moduleOf('src/auth/token/refresh.ts', 1)).toBe('src');
    expect(moduleOf('src/auth/token/refresh.ts', 3)).toBe('src/auth/token');
  });

  it('should use what there is when the path is shallower than the depth', () => {
    expect(moduleOf('src/index.ts', 2)).toBe('src');
    expect(moduleOf('README.md', 2)).toBe('.');
  });

  it('should reject a depth below 1', () => {
    expect(() => moduleOf('src/a.ts', 0)).toThrow(MisconfigurationError);
  });
});
