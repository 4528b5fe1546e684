import { status, type ServiceError } from '@grpc/grpc-js';
import { expect } from 'vitest';
import { OTHER_TENANT, REVIEW_QUEUE } from './rpc-corpus';
import { PROJECT } from './records';

// ListForReview over real gRPC, against a server with `rpcCorpus` indexed (the recall rpcs
// suite runs it on the embedded SQLite server and on Elasticsearch). Test support only.

/** An rpc over real gRPC with a bearer token (recall-rpcs.suite's `call`, bound to a client). */
export type Caller = (
  rpc: string,
  request: object,
  token?: string,
) => Promise<{ response?: unknown; error?: ServiceError }>;

interface ReviewPage {
  memories: {
    memory_id: string;
    type: string;
    content: string;
    confidence: number;
    source: string;
    reason: string;
    related_files: string[];
    created_at_ms: number;
    updated_at_ms: number;
  }[];
  next_page_token: string;
}

const SCOPE = { project_id: PROJECT };

export async function expectReviewQueue(call: Caller): Promise<void> {
  const list = async (request: object, token?: string) => {
    const { response, error } = await call('ListForReview', { scope: SCOPE, ...request }, token);
    expect(error, JSON.stringify(request)).toBeUndefined();
    return response as ReviewPage;
  };
  // A read token suffices; confirmed memories and another tenant's are not in the queue.
  const all = await list({}, 'token-acme-read');
  expect(all.memories.map((m) => m.memory_id)).toEqual([...REVIEW_QUEUE]);
  expect(all.next_page_token).toBe('');
  expect(all.memories[0]).toMatchObject({
    type: 'gotcha',
    content: 'Widget cache rule 1 inferred from sessions',
    confidence: 0.5,
    source: 'observer_inferred',
    related_files: ['src/widgets/cache.ts'],
  });
  expect(all.memories[0].reason).toMatch(/inferred by the observer/);
  expect(all.memories[0].created_at_ms).toBeGreaterThan(all.memories[1].created_at_ms);
  expect(all.memories[0].updated_at_ms).toBeGreaterThan(all.memories[0].created_at_ms);

  // Two pages of two: the token carries on where the first page stopped.
  const first = await list({ limit: 2 });
  expect(first.memories.map((m) => m.memory_id)).toEqual(REVIEW_QUEUE.slice(0, 2));
  expect(first.next_page_token).not.toBe('');
  const second = await list({ limit: 2, page_token: first.next_page_token });
  expect(second.memories.map((m) => m.memory_id)).toEqual(REVIEW_QUEUE.slice(2));
  expect(second.next_page_token).toBe('');

  // The other tenant sees its own queue only.
  const globex = await list({}, 'token-globex');
  expect(globex.memories.map((m) => m.memory_id)).toEqual(['globex-review']);

  // Tenancy as on every rpc: another tenant's scope is denied, an unknown token unauthenticated.
  const denied = await call('ListForReview', { scope: { ...SCOPE, tenant_id: OTHER_TENANT } });
  expect(denied.error?.code).toBe(status.PERMISSION_DENIED);
  const anonymous = await call('ListForReview', { scope: SCOPE }, 'no-such-token');
  expect(anonymous.error?.code).toBe(status.UNAUTHENTICATED);
  const invalid: [object, string][] = [
    [{ scope: {} }, 'scope\\.project_id'],
    [{ scope: SCOPE, page_token: 'x' }, 'page_token'],
  ];
  for (const [request, field] of invalid) {
    const { error } = await call('ListForReview', request);
    expect(error?.code, field).toBe(status.INVALID_ARGUMENT);
    expect(error?.details, field).toMatch(new RegExp(`^${field}: `));
  }
}
