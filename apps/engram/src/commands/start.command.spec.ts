import { resetConfigForTests } from '@engram/config';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { registerStartCommand } from './start.command';

// Issue #19, finding 1: `engram start` (either mode) refuses to serve every tenant to the network
// — a non-loopback gRPC address needs ENGRAM_GRPC_TOKENS_FILE — and a bad tokens file stops it
// before anything starts (no data dir created, no server checked).

const root = mkdtempSync(join(tmpdir(), 'engram-start-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllEnvs();
  resetConfigForTests();
});

function start(...args: string[]): Promise<unknown> {
  const program = new Command().exitOverride();
  registerStartCommand(program);
  return program.parseAsync(['node', 'engram', 'start', ...args]);
}

describe('engram start without authentication', () => {
  it('should refuse a non-loopback address in embedded mode, before creating anything', async () => {
    const dataDir = join(root, 'open');
    await expect(start('--data-dir', dataDir, '--grpc', '0.0.0.0:50999')).rejects.toThrow(
      /engram.recall.v1 will not listen on 0.0.0.0:50999 without authentication.*ENGRAM_GRPC_TOKENS_FILE/s,
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it('should refuse a non-loopback review API address in embedded mode too (issue #18)', async () => {
    vi.stubEnv('ENGRAM_REVIEW_GRPC_URL', '0.0.0.0:50998');
    resetConfigForTests();
    const dataDir = join(root, 'open-review');
    await expect(start('--data-dir', dataDir)).rejects.toThrow(
      /engram.review.v1 will not listen on 0.0.0.0:50998 without authentication/,
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it('should refuse a non-loopback address in distributed mode, before checking the servers', async () => {
    vi.stubEnv('ENGRAM_RECALL_GRPC_URL', '10.0.0.7:50051');
    await expect(start('--distributed')).rejects.toThrow(/will not listen on 10.0.0.7:50051/);
    vi.stubEnv('ENGRAM_RECALL_GRPC_URL', '127.0.0.1:50051');
    vi.stubEnv('ENGRAM_REVIEW_GRPC_URL', '0.0.0.0:50052');
    resetConfigForTests();
    await expect(start('--distributed')).rejects.toThrow(/engram.review.v1 will not listen/);
  });

  it('should refuse a bad tokens file, naming it', async () => {
    const file = join(root, 'tokens.json');
    writeFileSync(file, '{"short": {"tenants": ["acme"], "role": "read"}}', { mode: 0o600 });
    vi.stubEnv('ENGRAM_GRPC_TOKENS_FILE', file);
    const dataDir = join(root, 'bad-tokens');
    await expect(start('--data-dir', dataDir, '--grpc', '0.0.0.0:50999')).rejects.toThrow(
      /ENGRAM_GRPC_TOKENS_FILE: .*tokens\.json token #1: a token has at least 16 characters/,
    );
    expect(existsSync(dataDir)).toBe(false);
  });
});
