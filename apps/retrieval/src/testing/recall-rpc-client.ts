import { Metadata, type ServiceError } from '@grpc/grpc-js';
import { recallGrpcClient } from '../recall-grpc-client';

// A client of the recall gRPC service as a client of any language sees it (snake_case), with
// bearer tokens. Test support only.

type Unary = (
  request: object,
  metadata: Metadata,
  callback: (error: ServiceError | null, response?: unknown) => void,
) => void;

export type RecallClient = Record<string, Unary> & { close(): void };

export function recallClient(url: string): RecallClient {
  return recallGrpcClient<RecallClient>(url);
}

/** A unary call with a bearer token; resolves with the response or the ServiceError. */
export function call<R = Record<string, unknown>>(
  client: RecallClient,
  rpc: string,
  request: object,
  token = 'token-acme',
): Promise<{ response?: R; error?: ServiceError }> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    client[rpc](request, metadata, (error, response) =>
      resolve(error ? { error } : { response: response as R }),
    );
  });
}
