import type { Client as GrpcClient, ServiceError } from '@grpc/grpc-js';
import { createServer, type AddressInfo } from 'node:net';
import { PROJECT, TENANT } from './bench-recall-corpus';

// The client side of `engram bench recall --distributed`: Recall over real gRPC on a loopback port.

/** A loopback port nothing listens on (the server binds it a moment later). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export interface RecallReply {
  results: unknown[];
  embedding_model: string;
}

type RecallRpc = (
  request: object,
  options: { deadline: number },
  callback: (error: ServiceError | null, response?: RecallReply) => void,
) => void;

export type RecallGrpcClient = GrpcClient & { Recall: RecallRpc };

export function grpcRecall(client: RecallGrpcClient, text: string): Promise<RecallReply> {
  const request = {
    scope: { tenant_id: TENANT, project_id: PROJECT },
    query: text,
    k: 10,
    tier: 'TIER_MEMORIES',
  };
  return new Promise((resolve, reject) =>
    client.Recall(request, { deadline: Date.now() + 30_000 }, (error, response) =>
      error || !response ? reject(error ?? new Error('Recall: no response')) : resolve(response),
    ),
  );
}

export function ready(client: GrpcClient): Promise<void> {
  return new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())),
  );
}
