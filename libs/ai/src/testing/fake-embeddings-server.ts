import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  openAiError,
  send,
  startFakeHttpServer,
  type FakeExchange,
  type FakeHttpServer,
} from './fake-http-server';

export type { ReceivedRequest } from './fake-http-server';

/**
 * An in-process OpenAI-compatible embeddings server on loopback for tests: it speaks the real wire
 * format (POST /v1/embeddings, `{ model, input }` in, `{ object: 'list', data: [{ object:
 * 'embedding', embedding, index }], model, usage }` out, OpenAI-style `{ error }` bodies) and
 * returns `data` in reverse order, so clients must order by `index` as the API says.
 */
export type FakeEmbeddingsServer = FakeHttpServer<Behaviour>;

export type Behaviour =
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'drop' }
  | { kind: 'delay'; ms: number }
  | { kind: 'dims'; dims: number }
  | { kind: 'raw'; body: string };

export interface FakeServerOptions {
  model: string;
  dims: number;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401 as from OpenAI. */
  apiKey?: string;
}

export function startFakeEmbeddingsServer(
  options: FakeServerOptions,
): Promise<FakeEmbeddingsServer> {
  return startFakeHttpServer<Behaviour>((exchange, behaviour) =>
    handle(exchange, options, behaviour),
  );
}

/** A deterministic, deliberately not normalised vector for a text: a hashed character histogram. */
export function fakeEmbedding(text: string, dims: number): number[] {
  const vector = new Array<number>(dims).fill(0);
  vector[0] = 1;
  for (let i = 0; i < text.length; i += 1) vector[(text.charCodeAt(i) * 31 + i) % dims] += 1;
  return vector;
}

async function handle(
  { req, res, body, wait }: FakeExchange,
  options: FakeServerOptions,
  behaviour: Behaviour | undefined,
): Promise<void> {
  switch (behaviour?.kind) {
    case 'drop':
      req.socket.destroy();
      return;
    case 'status':
      return send(res, behaviour.status, behaviour.body ?? {}, behaviour.headers);
    case 'raw':
      res.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.body);
      return;
    case 'delay':
      await wait(behaviour.ms);
      return reply(req, res, body, options);
    case 'dims':
      return reply(req, res, body, { ...options, dims: behaviour.dims });
    case undefined:
      return reply(req, res, body, options);
  }
}

function reply(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  options: FakeServerOptions,
): void {
  if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
    return send(
      res,
      404,
      openAiError(`Unknown request URL: ${req.method} ${req.url}`, 'invalid_request_error'),
    );
  }
  if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
    return send(res, 401, openAiError('Incorrect API key provided.', 'invalid_request_error'));
  }
  const request = body as { model?: unknown; input?: unknown } | undefined;
  if (request?.model !== options.model) {
    return send(
      res,
      404,
      openAiError(`The model '${String(request?.model)}' does not exist`, 'invalid_request_error'),
    );
  }
  const input = typeof request.input === 'string' ? [request.input] : request.input;
  if (
    !Array.isArray(input) ||
    input.length === 0 ||
    !input.every((text) => typeof text === 'string' && text.length > 0)
  ) {
    return send(res, 400, openAiError("'$.input' is invalid.", 'invalid_request_error'));
  }
  const data = (input as string[]).map((text, index) => ({
    object: 'embedding',
    index,
    embedding: fakeEmbedding(text, options.dims),
  }));
  const tokens = (input as string[]).reduce((sum, text) => sum + text.split(/\s+/).length, 0);
  send(res, 200, {
    object: 'list',
    data: data.reverse(),
    model: options.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
