import {
  openAiError,
  send,
  startFakeHttpServer,
  type FakeExchange,
  type FakeHttpServer,
  type ReceivedRequest,
} from './fake-http-server';

/**
 * An in-process OpenAI-compatible chat completions server on loopback for tests: it speaks the
 * real wire format (POST /v1/chat/completions, `{ model, messages, max_tokens, temperature }` in,
 * `{ id, object: 'chat.completion', created, model, choices: [{ index, message: { role:
 * 'assistant', content }, finish_reason }], usage }` out, OpenAI-style `{ error }` bodies for
 * 4xx) and can be scripted to answer 429, 500, slowly, with a dropped connection or a malformed
 * body. The server itself is fake-http-server.ts's, as for fake-embeddings-server.ts.
 */
export type FakeChatServer = FakeHttpServer<ChatBehaviour>;

export type ReceivedChatRequest = ReceivedRequest;

export type ChatBehaviour =
  /** Answer with this content (and finish reason, default `stop`). */
  | { kind: 'reply'; content: string | null; finishReason?: string }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Close the connection without an answer. */
  | { kind: 'drop' }
  /** Wait, then answer normally (or as `then` says). */
  | { kind: 'delay'; ms: number; then?: ChatBehaviour }
  /** Send the headers at once and the body after `ms`: slow in the middle of the reply. */
  | { kind: 'slow-body'; ms: number }
  /** A 200 with this body as is (malformed JSON, a wrong shape, …). */
  | { kind: 'raw'; body: string };

export interface FakeChatServerOptions {
  model: string;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401 as from OpenAI. */
  apiKey?: string;
  /** The normal answer to a request (default: `echo: <last message>`). */
  respond?: (messages: { role: string; content: string }[]) => string;
}

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  max_tokens?: unknown;
}

export function startFakeChatServer(options: FakeChatServerOptions): Promise<FakeChatServer> {
  let completions = 0;
  return startFakeHttpServer<ChatBehaviour>((exchange, behaviour) =>
    behave(behaviour, { ...exchange, options, nextId: () => (completions += 1) }),
  );
}

interface Exchange extends FakeExchange {
  options: FakeChatServerOptions;
  nextId: () => number;
}

async function behave(behaviour: ChatBehaviour | undefined, x: Exchange): Promise<void> {
  switch (behaviour?.kind) {
    case 'drop':
      x.req.socket.destroy();
      return;
    case 'status':
      return send(x.res, behaviour.status, behaviour.body ?? {}, behaviour.headers);
    case 'raw':
      if (!x.res.destroyed) {
        x.res.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.body);
      }
      return;
    case 'delay':
      await x.wait(behaviour.ms);
      return behave(behaviour.then, x);
    case 'slow-body':
      x.res.writeHead(200, { 'content-type': 'application/json' });
      x.res.flushHeaders();
      await x.wait(behaviour.ms);
      if (!x.res.destroyed) x.res.end(JSON.stringify(completion(x, 'late', 'stop')));
      return;
    case 'reply':
      return answer(x, behaviour.content, behaviour.finishReason ?? 'stop');
    case undefined:
      return answer(x, undefined, 'stop');
  }
}

function answer(x: Exchange, content: string | null | undefined, finishReason: string): void {
  const problem = requestProblem(x);
  if (problem !== null) {
    return send(x.res, problem.status, openAiError(problem.message, problem.type));
  }
  const messages = (x.body as { messages: { role: string; content: string }[] }).messages;
  const text = content === undefined ? (x.options.respond ?? echo)(messages) : content;
  send(x.res, 200, completion(x, text, finishReason));
}

/** What OpenAI would refuse, or null. */
function requestProblem(x: Exchange): { status: number; message: string; type: string } | null {
  if (x.req.method !== 'POST' || x.req.url !== '/v1/chat/completions') {
    return {
      status: 404,
      message: `Unknown request URL: ${x.req.method} ${x.req.url}`,
      type: 'invalid_request_error',
    };
  }
  if (
    x.options.apiKey !== undefined &&
    x.req.headers.authorization !== `Bearer ${x.options.apiKey}`
  ) {
    return { status: 401, message: 'Incorrect API key provided.', type: 'invalid_request_error' };
  }
  const body = x.body as ChatBody | undefined;
  if (body?.model !== x.options.model) {
    return {
      status: 404,
      message: `The model '${String(body?.model)}' does not exist`,
      type: 'invalid_request_error',
    };
  }
  const messages = body.messages;
  const valid =
    Array.isArray(messages) &&
    messages.length > 0 &&
    messages.every(
      (m: unknown) =>
        typeof m === 'object' &&
        m !== null &&
        ['system', 'user', 'assistant'].includes((m as { role?: unknown }).role as string) &&
        typeof (m as { content?: unknown }).content === 'string',
    );
  if (!valid) {
    return { status: 400, message: "'$.messages' is invalid.", type: 'invalid_request_error' };
  }
  if (
    body.max_tokens !== undefined &&
    !(Number.isInteger(body.max_tokens) && (body.max_tokens as number) > 0)
  ) {
    return {
      status: 400,
      message: "'max_tokens' must be a positive integer.",
      type: 'invalid_request_error',
    };
  }
  return null;
}

function completion(x: Exchange, content: string | null, finishReason: string): unknown {
  const messages = ((x.body as ChatBody | undefined)?.messages ?? []) as { content?: string }[];
  const promptTokens = messages.reduce(
    (sum, m) => sum + Math.ceil((m.content ?? '').length / 4),
    0,
  );
  const completionTokens = Math.ceil((content ?? '').length / 4);
  return {
    id: `chatcmpl-fake-${x.nextId()}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: x.options.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

function echo(messages: { role: string; content: string }[]): string {
  return `echo: ${messages[messages.length - 1]?.content ?? ''}`;
}
