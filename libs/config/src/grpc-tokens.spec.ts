import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './engram-config';
import { grpcTokensOf, parseGrpcTokens } from './grpc-tokens';

const dir = mkdtempSync(join(tmpdir(), 'engram-tokens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, 0o600);
  return path;
}

describe('ENGRAM_GRPC_TOKENS_FILE', () => {
  it('should read the tokens file named by the configuration', () => {
    const path = file(
      'ok.json',
      JSON.stringify({
        'agent-token-0123456789': { tenants: ['acme'], role: 'write' },
        'person-token-012345678': { tenants: ['acme', 'globex'], role: 'admin' },
      }),
    );
    const tokens = grpcTokensOf(parseConfig({ ENGRAM_GRPC_TOKENS_FILE: path }));
    expect(tokens?.get('agent-token-0123456789')).toEqual({ tenants: ['acme'], role: 'write' });
    expect(tokens?.get('person-token-012345678')?.role).toBe('admin');
    expect(grpcTokensOf(parseConfig({}))).toBeNull();
  });

  it('should take the client token from ENGRAM_GRPC_TOKEN, or its older name', () => {
    expect(parseConfig({ ENGRAM_GRPC_TOKEN: 'a' }).recall.token).toBe('a');
    expect(parseConfig({ ENGRAM_RECALL_TOKEN: 'b' }).recall.token).toBe('b');
    expect(parseConfig({ ENGRAM_GRPC_TOKEN: 'a', ENGRAM_RECALL_TOKEN: 'b' }).recall.token).toBe(
      'a',
    );
  });

  it('should refuse a bad file with a message naming the file and the problem, never the token', () => {
    const bad: [string, RegExp][] = [
      ['{ nope', /is not JSON/],
      ['{}', /at least one token/],
      ['[]', /expected record|expected object/i],
      [JSON.stringify({ 'secret-token-0123456789': { tenants: [], role: 'read' } }), /tenant/],
      [
        JSON.stringify({ 'secret-token-0123456789': { tenants: ['a'], role: 'root' } }),
        /token #1\.role/,
      ],
      [
        JSON.stringify({ 'secret-token-0123456789': { tenants: ['a'], role: 'read', x: 1 } }),
        /token #1/,
      ],
      [JSON.stringify({ short: { tenants: ['a'], role: 'read' } }), /at least 16 characters/],
    ];
    for (const [text, message] of bad) {
      let error: unknown;
      try {
        parseGrpcTokens(text, '/etc/engram/tokens.json');
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const shown = String(error);
      expect(shown).toMatch(message);
      expect(shown).toMatch(/ENGRAM_GRPC_TOKENS_FILE: \/etc\/engram\/tokens\.json/);
      expect(shown).not.toMatch(/secret-token|short/);
    }
  });

  it('should refuse a missing file rather than start without authentication', () => {
    const config = parseConfig({ ENGRAM_GRPC_TOKENS_FILE: join(dir, 'missing.json') });
    expect(() => grpcTokensOf(config)).toThrow(/cannot read .*missing\.json/);
    expect(() => grpcTokensOf(parseConfig({ ENGRAM_GRPC_TOKENS_FILE: dir }))).toThrow(/not a file/);
  });
});
