import { credentials, loadPackageDefinition, type GrpcObject } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { SqliteRetrievalStore } from '@engram/embedded';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractEmbedder } from '../../../libs/core/src/ports/testing/recall-store.contract';
import { serveRecallGrpc } from './recall.runtime';
import { createEmbeddedRecallStack } from './retrieval.embedded';
import { freePort } from '../../../test/support/free-port';

type Unary<Req, Res> = (
  request: Req,
  callback: (error: Error | null, response: Res) => void,
) => void;
type GrpcClient = { close(): void } & Record<string, unknown>;

function clientOf(protoFile: string, servicePath: string[], url: string): GrpcClient {
  const definition = loadSync(protoFile, { keepCase: true, longs: String, enums: String });
  let node: unknown = loadPackageDefinition(definition);
  for (const part of servicePath) node = (node as GrpcObject)[part];
  const Client = node as new (
    url: string,
    creds: ReturnType<typeof credentials.createInsecure>,
  ) => GrpcClient;
  return new Client(url, credentials.createInsecure());
}

function call<Req, Res>(client: GrpcClient, method: string, request: Req): Promise<Res> {
  return new Promise((resolve, reject) =>
    (client[method] as Unary<Req, Res>).call(client, request, (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );
}

const REFLECTION_PROTO = join(
  require.resolve('@grpc/reflection'),
  '..',
  '..',
  'proto',
  'grpc',
  'reflection',
  'v1',
  'reflection.proto',
);

// The recall server as `engram start` serves it (embedded store), asked the standard questions a
// load balancer (health) and grpcurl (reflection) ask, with the standard protos.
describe('gRPC health checking and server reflection on the recall server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-health-'));
  const store = SqliteRetrievalStore.open({ dataDir: dir });
  const stack = createEmbeddedRecallStack({ store, embedder: contractEmbedder() });
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
    const health = clientOf(healthProtoPath, ['grpc', 'health', 'v1', 'Health'], server.url);
    try {
      const whole = await call<object, { status: string }>(health, 'Check', { service: '' });
      const recall = await call<object, { status: string }>(health, 'Check', {
        service: 'engram.recall.v1.Recall',
      });
      expect([whole.status, recall.status]).toEqual(['SERVING', 'SERVING']);
      await expect(call(health, 'Check', { service: 'no.such.Service' })).rejects.toMatchObject({
        code: 5,
      });
    } finally {
      health.close();
    }
  });

  it('should list the recall service and describe its file through reflection', async () => {
    const reflection = clientOf(
      REFLECTION_PROTO,
      ['grpc', 'reflection', 'v1', 'ServerReflection'],
      server.url,
    );
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
