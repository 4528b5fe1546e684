import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { recallProtoPath } from '@engram/contracts';

/**
 * An engram.recall.v1.Recall client as any gRPC client sees the service: fields in the proto's
 * snake_case (no camelCase conversion), int64 as numbers, defaults filled in. `C` is the caller's
 * view of the rpcs it calls (tests and `engram bench recall` type only what they use).
 */
export function recallGrpcClient<C extends { close(): void }>(url: string): C {
  const definition = loadSync(recallProtoPath(), {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const loaded = loadPackageDefinition(definition) as unknown as {
    engram: {
      recall: {
        v1: {
          Recall: new (url: string, creds: ReturnType<typeof credentials.createInsecure>) => C;
        };
      };
    };
  };
  return new loaded.engram.recall.v1.Recall(url, credentials.createInsecure());
}
