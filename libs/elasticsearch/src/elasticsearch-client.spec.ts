import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createElasticsearchClient } from './elasticsearch-client';

// A loopback HTTP server on its own thread (its own event loop), answering like Elasticsearch's
// `_cluster/health` and telling when each request arrived, on the clock both threads share.
const SERVER = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const server = createServer((request, response) => {
  parentPort.postMessage({ arrivedAt: performance.timeOrigin + performance.now() });
  response.setHeader('content-type', 'application/json');
  response.setHeader('x-elastic-product', 'Elasticsearch');
  response.end(JSON.stringify({ cluster_name: 'test', status: 'green' }));
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;

const now = () => performance.timeOrigin + performance.now();

describe('createElasticsearchClient', () => {
  let server: Worker;
  let url = '';
  const arrivals: number[] = [];

  beforeAll(async () => {
    server = new Worker(SERVER, { eval: true });
    url = await new Promise<string>((resolve) => {
      server.on('message', (message: { port?: number; arrivedAt?: number }) => {
        if (message.port) resolve(`http://127.0.0.1:${message.port}`);
        if (message.arrivedAt) arrivals.push(message.arrivedAt);
      });
    });
  });

  afterAll(async () => {
    await server.terminate();
  });

  it('should put a request on the wire before a synchronous task queued ahead of it runs', async () => {
    // A recall sends its BM25 search, then embeds the query synchronously (onnxruntime blocks
    // the event loop). The search must reach Elasticsearch before that, not after.
    const client = createElasticsearchClient(url);
    try {
      await client.cluster.health(); // the socket is now open and idle, as between recalls
      let blockEnded = 0;
      const blocked = new Promise<void>((resolve) =>
        setImmediate(() => {
          const until = now() + 100;
          while (now() < until);
          blockEnded = now();
          resolve();
        }),
      );
      await Promise.resolve();
      const health = client.cluster.health();
      await blocked;
      expect((await health).status).toBe('green');
      while (arrivals.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(arrivals[1]).toBeLessThan(blockEnded);
    } finally {
      await client.close();
    }
  });
});
