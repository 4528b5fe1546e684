// Issue #18: `engram start` (embedded) serves engram.review.v1 too — the distiller's server
// (startReviewServer) around a ReviewDesk on the SQLite log, with the tokens file's tenants and
// roles — and `engram review --grpc` is its client. Real gRPC on a free loopback port.
import { grpcTokensOf, parseConfig } from '@engram/config';
import { SqliteEventLogAdapter } from '@engram/embedded';
import { Command } from 'commander';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { distillerCodecs, prefixedDistillerTopics, ReviewGrpcClient } from '@engram/app-distiller';
import { until } from '@engram/app-distiller/testing';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import {
  REFLECT_AT,
  weekOfDistillations,
} from '../../../libs/core/src/distillation/testing/reflector-fixtures';
import { servingStatus } from '../../../libs/grpc/src/testing/grpc-standard-clients';
import { freePort } from '../../../test/support/free-port';
import { registerReviewCommand } from './commands/review.command';
import { startEmbeddedServices, type EmbeddedServices } from './embedded-services';

const ADMIN = 'acme-admin-token-0001';
const READER = 'acme-read-token-00001';

describe('engram.review.v1 served by the embedded services', () => {
  let dir: string;
  let url: string;
  let services: EmbeddedServices;
  /** Clients with the admin token, the read token and none. */
  let admin: ReviewGrpcClient;
  let reader: ReviewGrpcClient;
  let anonymous: ReviewGrpcClient;

  beforeAll(async () => {
    vi.stubGlobal('fetch', () => Promise.reject(new Error('no network in embedded mode')));
    dir = mkdtempSync(join(tmpdir(), 'engram-embedded-review-'));
    const tokensFile = join(dir, 'tokens.json');
    writeFileSync(
      tokensFile,
      JSON.stringify({
        [ADMIN]: { tenants: ['acme'], role: 'admin' },
        [READER]: { tenants: ['acme'], role: 'read' },
      }),
      { mode: 0o600 },
    );
    url = `127.0.0.1:${await freePort()}`;
    const config = parseConfig({ ENGRAM_GRPC_TOKENS_FILE: tokensFile });
    services = await startEmbeddedServices({
      config,
      dataDir: join(dir, 'data'),
      sweepIntervalMs: 50,
      llm: null,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
      reflector: { clock: () => REFLECT_AT, quietMs: 0 },
      review: { url, tokens: grpcTokensOf(config) },
    });
    // A week of distillations reaches the reflector, which proposes from them at once.
    const codecs = distillerCodecs(prefixedDistillerTopics(config.topicPrefix));
    await new SqliteEventLogAdapter(services.log).publish(
      codecs.reflector,
      weekOfDistillations().map((distillation) => ({
        v: 1 as const,
        kind: 'distillation' as const,
        tenantId: distillation.tenantId,
        projectId: distillation.projectId,
        distillation,
      })),
    );
    await until(() => services.distiller.reflector.counters.proposals >= 9, 20_000);
    admin = new ReviewGrpcClient(url, { token: ADMIN });
    reader = new ReviewGrpcClient(url, { token: READER });
    anonymous = new ReviewGrpcClient(url);
  }, 60_000);

  afterAll(async () => {
    for (const c of [admin, reader, anonymous]) c?.close();
    await services?.stop();
    vi.unstubAllGlobals();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should serve the review service beside the embedded services', async () => {
    expect(services.review?.url).toBe(url);
    expect(await servingStatus(url, 'engram.review.v1.Review')).toBe('SERVING');
  });

  it('should list the token’s tenant’s proposals, and refuse a call without a token', async () => {
    const { proposals } = await reader.list({ scope: {} });
    expect(proposals).toHaveLength(9);
    expect(proposals[0]).toMatchObject({ tenantId: 'acme', status: 'pending' });
    await expect(anonymous.list({ scope: {} })).rejects.toThrow(/Bearer token is required/);
  });

  it('should approve with an admin token: the in-process distiller records it', async () => {
    const [first] = (await admin.list({ scope: {} })).proposals;
    await expect(reader.approve({ scope: {}, proposalId: first.proposalId })).rejects.toThrow(
      /a decision needs an admin token/,
    );
    await expect(anonymous.approve({ scope: {}, proposalId: first.proposalId })).rejects.toThrow(
      /Bearer token is required/,
    );
    const approved = await admin.approve({
      scope: {},
      proposalId: first.proposalId,
      reviewer: 'tim',
    });
    expect(approved).toMatchObject({
      changed: true,
      proposal: { proposalId: first.proposalId, status: 'approved', decidedBy: 'tim' },
    });
    expect(approved.proposal.promotedMemoryId).not.toBe('');
  });

  it('should answer `engram review --grpc HOST:PORT`', async () => {
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => {
      printed.push(line);
    });
    try {
      const program = new Command().exitOverride();
      registerReviewCommand(program);
      await program.parseAsync(
        ['review', 'list', '--grpc', url, '--token', ADMIN, '--status', 'approved', '--json'],
        { from: 'user' },
      );
    } finally {
      log.mockRestore();
    }
    const listed = JSON.parse(printed.join('\n')) as { proposals: { status: string }[] };
    expect(listed.proposals.map((p) => p.status)).toEqual(['approved']);
    expect(process.exitCode ?? 0).toBe(0);
  });
});
