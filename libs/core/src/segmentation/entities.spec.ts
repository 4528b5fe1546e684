import { describe, expect, it } from 'vitest';
import {
  distinctEntities,
  entityKey,
  extractEntities,
  extractEntityMentions,
  fileBaseName,
} from './entities';

describe('extractEntities', () => {
  it('should give nothing for empty or plain prose', () => {
    expect(extractEntities('')).toEqual([]);
    expect(extractEntities('please make the tests pass again, thanks')).toEqual([]);
  });

  it('should name files by their base name, from paths and bare file names', () => {
    expect(extractEntities('fix the race in src/auth/refresh.ts and update README.md')).toEqual([
      'refresh.ts',
      'README.md',
    ]);
    expect(extractEntities('see ./lib/s3_learn.rs and package.json')).toEqual([
      's3_learn.rs',
      'package.json',
    ]);
  });

  it('should not take directories, method calls or prose with dots for files', () => {
    expect(extractEntities('we should exclude the ../library and libs/core')).toEqual([]);
    expect(extractEntities('it calls res.json() twice')).toEqual([]);
    expect(extractEntities('done. then stop, e.g. here')).toEqual([]);
  });

  it('should find ticket ids but not standards that look like them', () => {
    expect(extractEntities('ABC-123 blocks JIRA-42; see CVE-2024-12345')).toEqual([
      'ABC-123',
      'JIRA-42',
      'CVE-2024-12345',
    ]);
    expect(extractEntities('save it as UTF-8 and hash with SHA-256')).toEqual([]);
  });

  it('should find error class names and errno codes, not the bare word Error', () => {
    expect(
      extractEntities('TypeError: x is undefined, then NullPointerException and ENOENT'),
    ).toEqual(['TypeError', 'NullPointerException', 'ENOENT']);
    expect(extractEntities('Error: something went wrong. ERROR. EXIT')).toEqual([]);
  });

  it('should find camelCase, PascalCase and snake_case identifiers, not ordinary words', () => {
    expect(
      extractEntities('The TokenRefresher calls parseHTTPResponse with user_id and MAX_RETRIES'),
    ).toEqual(['TokenRefresher', 'parseHTTPResponse', 'user_id', 'MAX_RETRIES']);
    expect(extractEntities('The API and JSON are fine')).toEqual([]);
  });

  it('should take a single identifier in backticks even when it is lower case', () => {
    expect(extractEntities('rename `refresh` to `refreshToken()`')).toEqual([
      'refresh',
      'refreshToken',
    ]);
    expect(extractEntities('run `npm test -- src/auth/refresh.spec.ts`')).toEqual([
      'refresh.spec.ts',
    ]);
  });

  it('should skip URLs whole', () => {
    expect(
      extractEntities('read https://github.com/org/repo/blob/main/src/TokenStore.ts first'),
    ).toEqual([]);
  });

  it('should keep the first spelling of entities that differ only in case, in text order', () => {
    expect(extractEntities('tokenRefresher broke; TokenRefresher again; ABC-1')).toEqual([
      'tokenRefresher',
      'ABC-1',
    ]);
    expect(extractEntities('userId then USERID then userID')).toEqual(['userId']);
  });
});

describe('extractEntities on pasted blobs', () => {
  it('should scan long unbroken runs in linear time', () => {
    const started = performance.now();
    for (const blob of ['a.'.repeat(100_000), 'a-'.repeat(100_000), 'x/'.repeat(100_000)]) {
      expect(extractEntities(blob)).toEqual([]);
    }
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('extractEntityMentions', () => {
  it('should report every mention with its kind, repeats included, in text order', () => {
    expect(
      extractEntityMentions('ABC-9: TypeError in src/a/b.ts from fooBar, fooBar again'),
    ).toEqual([
      { kind: 'ticket', value: 'ABC-9' },
      { kind: 'error', value: 'TypeError' },
      { kind: 'file', value: 'b.ts' },
      { kind: 'identifier', value: 'fooBar' },
      { kind: 'identifier', value: 'fooBar' },
    ]);
  });
});

describe('fileBaseName', () => {
  it('should take the last segment of either slash', () => {
    expect(fileBaseName('src/auth/refresh.ts')).toBe('refresh.ts');
    expect(fileBaseName('C:\\repo\\src\\main.rs')).toBe('main.rs');
    expect(fileBaseName('.env')).toBe('.env');
    expect(fileBaseName('deploy/Makefile')).toBe('Makefile');
  });

  it('should give null for directories, dots and glob patterns', () => {
    expect(fileBaseName('src/')).toBeNull();
    expect(fileBaseName('libs/core')).toBeNull();
    expect(fileBaseName('..')).toBeNull();
    expect(fileBaseName('**/*.ts')).toBeNull();
    expect(fileBaseName('')).toBeNull();
  });
});

describe('distinctEntities and entityKey', () => {
  it('should compare entities case-insensitively', () => {
    expect(entityKey('TokenRefresher')).toBe('tokenrefresher');
    expect(distinctEntities(['A.ts', 'a.TS', 'b.ts'])).toEqual(['A.ts', 'b.ts']);
  });
});
