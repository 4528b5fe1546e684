import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { SqliteRetrievalStore } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractEmbedder } from '../../../libs/core/src/ports/testing/recall-store.contract';
import { freePort } from '../../../test/support/free-port';
import { serveRecallGrpc } from './recall-server';
import { createRecallStack } from './retrieval-backend';
import { sqliteBackend } from './sqlite-backend';
import {
  healthClient,
  reflectionClient,
  servingStatus,
  unary,
} from '../../../libs/grpc/src/testing/grpc-standard-clients';

// The recall server as `engram start` serves it (embedded store), asked the standard questions a
// load balancer (health) and grpcurl (reflection) ask, with the standard protos.
describe('gRPC health checking and server reflection on the recall server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-health-'));
  const store = SqliteRetrievalStore.open({ dataDir: dir });
  const stack = createRecallStack({
    ranking: DEFAULT_RANKING_CONFIG,
    backend: sqliteBackend(store),
    embedder: contractEmbedder(),
  });
  let server: Awaited<ReturnType<typeof serveRecallGrpc>>;

  beforeAll(async () => {
    server = await serveRecallGrpc(stack, { url: `127.0.0.1:${await freePort()}`, logger: false });
  });

  afterAll(async () => {
    await server.app.close();
    await stack.access.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should answer SERVING for the server and for engram.recall.v1.Recall, NOT_FOUND for others', async () => {
    expect(await servingStatus(server.url, '')).toBe('SERVING');
    expect(await servingStatus(server.url, 'engram.recall.v1.Recall')).toBe('SERVING');
    const health = healthClient(server.url);
    try {
      await expect(unary(health, 'Check', { service: 'no.such.Service' })).rejects.toMatchObject({
        code: 5,
      });
    } finally {
      health.close();
    }
  });

  it('should list the recall service and describe its file through reflection', async () => {
    const reflection = reflectionClient(server.url);
    try {
      const stream = (
        reflection.ServerReflectionInfo as () => NodeJS.ReadWriteStream & {
          write(message: object): void;
        }
      ).call(reflection);
      const answers: Record<string, unknown>[] = [];
      const done = new Promise<void>((resolve, reject) => {
        stream.on('data', (answer: Record<string, unknown>) => {
          answers.push(answer);
          if (answers.length === 2) stream.end();
        });
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      stream.write({ list_services: '' });
      stream.write({ file_containing_symbol: 'engram.recall.v1.Recall' });
      await done;
      const listed = answers[0].list_services_response as { service: { name: string }[] };
      expect(listed.service.map((s) => s.name)).toContain('engram.recall.v1.Recall');
      const files = answers[1].file_descriptor_response as { file_descriptor_proto: Buffer[] };
      expect(files.file_descriptor_proto.length).toBeGreaterThan(0);
      expect(Buffer.concat(files.file_descriptor_proto).toString('latin1')).toContain(
        'InjectForFile',
      );
    } finally {
      reflection.close();
    }
  });
});

describe('a recall server on a port that is already taken', () => {
  it('should refuse to start with an error naming the address, the setting and the fix', async () => {
    const holder = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'engram-taken-'));
    const store = SqliteRetrievalStore.open({ dataDir: dir });
    const stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(store),
      embedder: contractEmbedder(),
    });
    try {
      await expect(
        serveRecallGrpc(stack, { url: `127.0.0.1:${port}`, logger: false }),
      ).rejects.toThrow(
        `cannot listen on 127.0.0.1:${port} (ENGRAM_RECALL_GRPC_URL): the address is already in use; ` +
          'stop the process using it or set ENGRAM_RECALL_GRPC_URL to a free host:port',
      );
    } finally {
      await stack.access.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
