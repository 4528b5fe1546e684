// `engram review --grpc/--distributed`'s memory side (issue #20): the queue through the recall
// API's ListForReview and the decisions through its Feedback, over real gRPC, against the recall
// server `engram start` serves (embedded stores, the rpc corpus indexed) — no store client here.
import {
  PROJECT,
  REVIEW_QUEUE,
  RPC_TOKENS,
  startEmbeddedRpcServer,
  type EmbeddedRpcServer,
} from '@engram/app-retrieval/testing';
import { ReviewRequestError } from '@engram/app-distiller';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMemoryReviews, grpcMemoryReviews } from './memory-review';

describe('engram review over gRPC: inferred memories through ListForReview and Feedback', () => {
  let server: EmbeddedRpcServer;
  // The tenant is the one the token allows: the server decides ('').
  const scope = { tenantId: '', projectId: PROJECT };

  beforeAll(async () => {
    server = await startEmbeddedRpcServer(RPC_TOKENS);
  });
  afterAll(() => server?.close());

  it('should list the queue, then approve and reject through Feedback', async () => {
    const reviews = grpcMemoryReviews(server.url, 'token-acme');
    expect(await reviews.tenantsWithProject(PROJECT)).toEqual(['']);
    const queued = await reviews.pending(scope);
    expect(queued.map((m) => m.memoryId)).toEqual([...REVIEW_QUEUE]);
    expect(queued[0]).toMatchObject({
      projectId: PROJECT,
      memoryType: 'gotcha',
      source: 'observer_inferred',
      content: 'Widget cache rule 1 inferred from sessions',
    });
    expect(formatMemoryReviews(queued)).toContain('# 3 inferred memories to review');

    const approved = await reviews.decide({
      ...scope,
      memoryId: 'review-1',
      action: 'approve',
      text: null,
      by: 'alice',
    });
    expect(approved).toMatchObject({
      memoryId: 'review-1',
      action: 'approve',
      deleted: false,
      content: 'Widget cache rule 1 inferred from sessions',
    });
    const rejected = await reviews.decide({
      ...scope,
      memoryId: 'review-2',
      action: 'reject',
      text: null,
      by: null,
    });
    expect(rejected).toMatchObject({ memoryId: 'review-2', deleted: true, confidence: 0 });
    expect((await reviews.pending(scope)).map((m) => m.memoryId)).toEqual(['review-3']);

    const missing = reviews.decide({
      ...scope,
      memoryId: 'no-such-memory',
      action: 'approve',
      text: null,
      by: null,
    });
    await expect(missing).rejects.toBeInstanceOf(ReviewRequestError);
    await expect(missing).rejects.toMatchObject({ code: 'not-found' });
    await reviews.close();
  });

  it("should see only the token's tenant, and fail when the server is not there", async () => {
    const globex = grpcMemoryReviews(server.url, 'token-globex');
    expect((await globex.pending(scope)).map((m) => m.memoryId)).toEqual(['globex-review']);
    const down = grpcMemoryReviews('127.0.0.1:1', 'token-acme');
    await expect(down.pending(scope)).rejects.toThrow(
      /ListForReview at 127\.0\.0\.1:1: UNAVAILABLE/,
    );
  });
});
