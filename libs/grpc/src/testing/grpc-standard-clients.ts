// Test support: clients of the standard gRPC services (health, reflection) from their own protos,
// as a load balancer or grpcurl would call them.
import { credentials, loadPackageDefinition, type GrpcObject } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { join } from 'node:path';

export type GrpcClient = { close(): void } & Record<string, unknown>;
type Unary<Req, Res> = (
  request: Req,
  callback: (error: Error | null, response: Res) => void,
) => void;

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

export function unary<Req, Res>(client: GrpcClient, method: string, request: Req): Promise<Res> {
  return new Promise((resolve, reject) =>
    (client[method] as Unary<Req, Res>).call(client, request, (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );
}

export function healthClient(url: string): GrpcClient {
  return clientOf(healthProtoPath, ['grpc', 'health', 'v1', 'Health'], url);
}

export function reflectionClient(url: string): GrpcClient {
  return clientOf(REFLECTION_PROTO, ['grpc', 'reflection', 'v1', 'ServerReflection'], url);
}

/** grpc.health.v1.Health/Check of one service ("" for the whole server). */
export async function servingStatus(url: string, service: string): Promise<string> {
  const health = healthClient(url);
  try {
    return (await unary<object, { status: string }>(health, 'Check', { service })).status;
  } finally {
    health.close();
  }
}
