import {
  DownstreamUnavailableError,
  l2Norm,
  l2Normalise,
  MisconfigurationError,
} from '@engram/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingServiceError } from './errors';
import {
  OpenAiCompatibleEmbedder,
  type OpenAiCompatibleOptions,
} from './openai-compatible-embedder';
import {
  fakeEmbedding,
  startFakeEmbeddingsServer,
  type FakeEmbeddingsServer,
} from './testing/fake-embeddings-server';

const MODEL = 'text-embedding-3-small';
const DIMS = 8;
const API_KEY = 'sk-test';

describe('OpenAiCompatibleEmbedder against an OpenAI-compatible server', () => {
  let server: FakeEmbeddingsServer;

  beforeAll(async () => {
    server = await startFakeEmbeddingsServer({ model: MODEL, dims: DIMS, apiKey: API_KEY });
  });
  afterAll(() => server.close());
  afterEach(() => {
    server.requests.length = 0;
  });

  function embedder(overrides: Partial<OpenAiCompatibleOptions> = {}): OpenAiCompatibleEmbedder {
    return new OpenAiCompatibleEmbedder({
      baseUrl: server.baseUrl,
      model: MODEL,
      dims: DIMS,
      apiKey: API_KEY,
      backoff: { initialMs: 1, maxMs: 20 },
      ...overrides,
    });
  }

  it('should post { model, input } with the key and return unit vectors in input order', async () => {
    const texts = ['fix the auth bug', 'debug the login failure', 'weather in New York'];
    const vectors = await embedder().embed(texts);

    expect(server.requests).toEqual([
      {
        path: '/v1/embeddings',
        authorization: `Bearer ${API_KEY}`,
        contentType: 'application/json',
        body: { model: MODEL, input: texts },
      },
    ]);
    // The server answers in reverse order; each vector must still match its own text.
    vectors.forEach((vector, i) => {
      expect(Array.from(vector)).toEqual(Array.from(l2Normalise(fakeEmbedding(texts[i], DIMS))));
      expect(l2Norm(vector)).toBeCloseTo(1, 6);
    });
  });

  it('should split the texts into batches of maxBatchSize and keep the overall order', async () => {
    const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
    const vectors = await embedder({ maxBatchSize: 2 }).embed(texts);

    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([
      ['a', 'bb'],
      ['ccc', 'dddd'],
      ['eeeee'],
    ]);
    expect(vectors.map((v) => Array.from(v))).toEqual(
      texts.map((t) => Array.from(l2Normalise(fakeEmbedding(t, DIMS)))),
    );
  });

  it('should make no request for no texts', async () => {
    await expect(embedder().embed([])).resolves.toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('should name the model in its id unless an id is configured', () => {
    expect(embedder().id).toBe(`openai-compatible:${MODEL}`);
    expect(embedder({ id: 'text-embedding-3-small@2024' }).id).toBe('text-embedding-3-small@2024');
    expect(embedder().dims).toBe(DIMS);
  });

  it('should retry 429 and 5xx replies, then succeed', async () => {
    server.next(
      {
        kind: 'status',
        status: 429,
        body: { error: { message: 'Rate limit reached' } },
        headers: { 'retry-after': '0' },
      },
      { kind: 'status', status: 503, body: { error: { message: 'overloaded' } } },
    );
    const [vector] = await embedder().embed(['retry me']);

    expect(server.requests).toHaveLength(3);
    expect(Array.from(vector)).toEqual(Array.from(l2Normalise(fakeEmbedding('retry me', DIMS))));
  });

  it('should retry a dropped connection', async () => {
    server.next({ kind: 'drop' });
    await expect(embedder().embed(['dropped once'])).resolves.toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('should time out a slow attempt and retry it', async () => {
    server.next({ kind: 'delay', ms: 1_000 });
    await expect(embedder({ timeoutMs: 100 }).embed(['slow once'])).resolves.toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('should give up after maxAttempts with a retriable DownstreamUnavailableError', async () => {
    server.next(
      ...Array.from({ length: 3 }, () => ({
        kind: 'status' as const,
        status: 500,
        body: { error: 'boom' },
      })),
    );
    const failure = embedder({ maxAttempts: 3 }).embed(['never']);

    await expect(failure).rejects.toBeInstanceOf(DownstreamUnavailableError);
    await expect(failure).rejects.toThrow(/failed 3 times; last: HTTP 500/);
    expect(server.requests).toHaveLength(3);
  });

  it('should not retry a refused request (wrong key, unknown model)', async () => {
    const wrongKey = embedder({ apiKey: 'sk-wrong' }).embed(['x']);
    await expect(wrongKey).rejects.toBeInstanceOf(EmbeddingServiceError);
    await expect(wrongKey).rejects.toThrow(/HTTP 401.*Incorrect API key/);

    await expect(embedder({ model: 'no-such-model' }).embed(['x'])).rejects.toThrow(
      /HTTP 404.*does not exist/,
    );
    expect(server.requests).toHaveLength(2);
  });

  it('should fail with a MisconfigurationError when the vectors are not the configured dims', async () => {
    server.next({ kind: 'dims', dims: 12 });
    const failure = embedder().embed(['x']);

    await expect(failure).rejects.toBeInstanceOf(MisconfigurationError);
    await expect(failure).rejects.toThrow(/returns 12-dim vectors but dims is configured as 8/);
  });

  it('should reject a reply that is not an embeddings reply', async () => {
    server.next({ kind: 'raw', body: '{"data": [{"embedding": [1, 2], "index": 5}]}' });
    await expect(embedder().embed(['x'])).rejects.toThrow(/index 5 is not an input position/);

    server.next({ kind: 'raw', body: '<html>proxy error</html>' });
    await expect(embedder().embed(['x'])).rejects.toThrow(/not JSON: <html>/);
  });
});

describe('OpenAiCompatibleEmbedder configuration', () => {
  it('should refuse unusable settings at construction', () => {
    expect(
      () => new OpenAiCompatibleEmbedder({ baseUrl: 'localhost:11434', model: 'm', dims: 0 }),
    ).toThrow(MisconfigurationError);
    expect(
      () => new OpenAiCompatibleEmbedder({ baseUrl: 'localhost:11434', model: 'm', dims: 0 }),
    ).toThrow(/baseUrl must be an http\(s\) URL.*dims must be a positive integer/);
  });

  it('should report an unreachable server as retriable once the attempts run out', async () => {
    // A port that was just free: nothing listens there, so each connection is refused at once.
    const closed = await startFakeEmbeddingsServer({ model: 'm', dims: 4 });
    await closed.close();
    const unreachable = new OpenAiCompatibleEmbedder({
      baseUrl: closed.baseUrl,
      model: 'm',
      dims: 4,
      maxAttempts: 2,
      backoff: { initialMs: 1, maxMs: 2 },
    });
    const failure = unreachable.embed(['x']);
    await expect(failure).rejects.toBeInstanceOf(DownstreamUnavailableError);
    await expect(failure).rejects.toThrow(
      /failed 2 times; last: request failed: fetch failed \(.*ECONNREFUSED/,
    );
  });
});
