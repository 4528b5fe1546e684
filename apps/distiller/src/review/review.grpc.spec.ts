// engram.review.v1 over real gRPC, on the embedded log: the wire messages, the status codes and
// tenant scoping by bearer token, like the recall API's.
import { testDistillerSettings } from '../testing/test-settings';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { tenantTokens } from '@engram/core';
import { join } from 'node:path';
import { EmbeddedStreamPlatform, SqliteEventLog } from '@engram/embedded';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  REFLECT_AT,
  weekOfDistillations,
} from '../../../../libs/core/src/distillation/testing/reflector-fixtures';
import { startDistiller, type RunningDistiller } from '../distiller.topology';
import { distillerCodecs } from '../distiller-topics';
import { DEFAULT_DISTILLER_TOPICS } from '../distiller.stage';
import { distillationWork } from '../reflector/reflector-work';
import { ReviewDesk } from './review-desk';
import { ReviewGrpcClient } from './review.grpc-client';
import { startDistillerReview, startReviewServer, type ReviewServer } from './review.server';
import { freePort } from '../../../../test/support/free-port';
import { servingStatus } from '../../../../libs/grpc/src/testing/grpc-standard-clients';

const CODECS = distillerCodecs(DEFAULT_DISTILLER_TOPICS);

describe('the review API over gRPC', () => {
  let dir: string;
  let log: SqliteEventLog;
  let distiller: RunningDistiller;
  let server: ReviewServer;
  let url: string;
  const clients: ReviewGrpcClient[] = [];
  const client = (token?: string) => {
    const made = new ReviewGrpcClient(url, token === undefined ? {} : { token });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    vi.stubGlobal('fetch', () => Promise.reject(new Error('no network')));
    dir = mkdtempSync(join(tmpdir(), 'engram-review-grpc-'));
    log = SqliteEventLog.open({ dataDir: dir });
    const platform = new EmbeddedStreamPlatform(log);
    distiller = await startDistiller({
      platform,
      settings: testDistillerSettings(),
      sweepIntervalMs: 20,
      retry: { initialMs: 5, maxMs: 50 },
      reflector: { clock: () => REFLECT_AT, quietMs: 0 },
    });
    const port = await platform.eventLog();
    await port.publish(CODECS.reflector, weekOfDistillations().map(distillationWork));
    url = `127.0.0.1:${await freePort()}`;
    // As the distiller serves it in either mode: on its platform's event log.
    server = await startDistillerReview(platform, DEFAULT_DISTILLER_TOPICS, {
      desk: { pollMs: 10, timeoutMs: 10_000, clock: () => REFLECT_AT },
      url,
      tokens: tenantTokens({
        't-acme': { tenants: ['acme'], role: 'admin' },
        't-both': { tenants: ['acme', 'globex'], role: 'admin' },
        't-acme-read': { tenants: ['acme'], role: 'read' },
        't-acme-write': { tenants: ['acme'], role: 'write' },
      }),
    });
    const deadline = Date.now() + 20_000;
    while (distiller.reflector.counters.proposals < 9 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await server.stop();
    await distiller.stop();
    log.close();
    vi.unstubAllGlobals();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should answer gRPC health checks for the review service', async () => {
    expect(await servingStatus(url, 'engram.review.v1.Review')).toBe('SERVING');
  });

  it('should list the token’s tenant’s pending proposals, in order, with their evidence', async () => {
    const { proposals } = await client('t-acme').list({ scope: {} });
    expect(proposals).toHaveLength(9);
    expect(proposals[0]).toMatchObject({
      proposalId: 'p-20260217-001',
      tenantId: 'acme',
      projectId: 'acme/api',
      status: 'pending',
      createdAt: REFLECT_AT,
      decidedAt: 0,
      promotedMemoryId: '',
    });
    expect(proposals[0].evidenceEventIds.length).toBeGreaterThan(0);
    expect((await client('t-acme').list({ scope: {}, status: 'approved' })).proposals).toEqual([]);
  });

  it('should edit then approve, and answer refusals with their status codes', async () => {
    const acme = client('t-acme');
    const edited = await acme.editAndApprove({
      scope: { tenantId: 'acme' },
      proposalId: 'p-20260217-002',
      text: 'Never commit .env files',
      reviewer: 'tim',
    });
    expect(edited).toMatchObject({
      changed: true,
      proposal: { status: 'approved', text: 'Never commit .env files', decidedBy: 'tim' },
    });
    expect(edited.proposal.promotedMemoryId).not.toBe('');
    await expect(
      acme.editAndApprove({ scope: {}, proposalId: 'p-20260217-003', text: ' ' }),
    ).rejects.toMatchObject({ code: 'invalid' });
    await expect(acme.approve({ scope: {}, proposalId: '' })).rejects.toMatchObject({
      code: 'invalid',
    });
    await expect(acme.reject({ scope: {}, proposalId: 'p-20260217-002' })).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(acme.approve({ scope: {}, proposalId: 'p-20260101-001' })).rejects.toMatchObject({
      code: 'not-found',
    });
  });

  it('should let read and write tokens list, and only admin tokens decide', async () => {
    const decisions = (c: ReviewGrpcClient, tenantId = 'acme') => [
      c.approve({ scope: { tenantId }, proposalId: 'p-20260217-004' }),
      c.editAndApprove({ scope: { tenantId }, proposalId: 'p-20260217-004', text: 'x' }),
      c.reject({ scope: { tenantId }, proposalId: 'p-20260217-004' }),
    ];
    for (const token of ['t-acme-read', 't-acme-write']) {
      expect((await client(token).list({ scope: {} })).proposals.length).toBeGreaterThan(0);
      for (const decision of decisions(client(token))) {
        await expect(decision).rejects.toThrow(/a decision needs an admin token/);
      }
    }
    for (const decision of [client().list({ scope: {} }), ...decisions(client())]) {
      await expect(decision).rejects.toThrow(/Bearer token is required/);
    }
    for (const decision of [
      client('nope-nope').list({ scope: {} }),
      ...decisions(client('nope-nope')),
    ]) {
      await expect(decision).rejects.toThrow(/unknown token/);
    }
    for (const decision of decisions(client('t-acme'), 'globex')) {
      await expect(decision).rejects.toThrow(/may not reach tenant "globex"/);
    }
  });

  it('should scope every call by the bearer token, like the recall API', async () => {
    await expect(client().list({ scope: {} })).rejects.toThrow(/Bearer token is required/);
    await expect(client('t-acme').list({ scope: { tenantId: 'globex' } })).rejects.toThrow(
      /may not reach tenant "globex"/,
    );
    // A token for two tenants must name one; the other tenant has no proposals.
    await expect(client('t-both').list({ scope: {} })).rejects.toMatchObject({ code: 'invalid' });
    expect((await client('t-both').list({ scope: { tenantId: 'globex' } })).proposals).toEqual([]);
    await expect(
      client('t-both').approve({ scope: { tenantId: 'globex' }, proposalId: 'p-20260217-001' }),
    ).rejects.toMatchObject({ code: 'not-found' });
  });
});

describe('a review server without tokens', () => {
  it('should refuse to listen on a non-loopback address, naming ENGRAM_GRPC_TOKENS_FILE', async () => {
    await expect(
      startReviewServer({ desk: {} as ReviewDesk, url: '0.0.0.0:50052', logger: false }),
    ).rejects.toThrow(
      /engram.review.v1 will not listen on 0.0.0.0:50052.*ENGRAM_GRPC_TOKENS_FILE/s,
    );
  });
});
