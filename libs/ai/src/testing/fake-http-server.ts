import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The scaffolding the fake OpenAI-compatible servers share (fake-chat-server.ts,
 * fake-embeddings-server.ts): an in-process HTTP server on loopback that records every request,
 * hands each one the next scripted behaviour, and closes at once (open connections dropped,
 * pending waits abandoned).
 */
export interface FakeHttpServer<Behaviour> {
  /** Root to configure as `baseUrl`, e.g. `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Every request received, parsed. */
  requests: ReceivedRequest[];
  /** Queue one behaviour per upcoming request; the normal replies resume after them. */
  next(...behaviours: Behaviour[]): void;
  close(): Promise<void>;
}

export interface ReceivedRequest {
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

/** One request as a fake server's handler gets it. */
export interface FakeExchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  /** Resolves after `ms`, unless the server closes first. */
  wait: (ms: number) => Promise<void>;
}

/**
 * Starts the server; `handle` answers each request, given the next queued behaviour (undefined
 * when the queue is empty: the normal reply).
 */
export async function startFakeHttpServer<Behaviour>(
  handle: (exchange: FakeExchange, behaviour: Behaviour | undefined) => Promise<void>,
): Promise<FakeHttpServer<Behaviour>> {
  const requests: ReceivedRequest[] = [];
  const queue: Behaviour[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readJson(req);
      requests.push({
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      });
      await handle({ req, res, body, wait }, queue.shift());
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    next: (...behaviours) => queue.push(...behaviours),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A JSON reply (nothing when the client is gone). */
export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify(body));
}

/** An error body as OpenAI sends it. */
export function openAiError(message: string, type: string): unknown {
  return { error: { message, type, param: null, code: null } };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
