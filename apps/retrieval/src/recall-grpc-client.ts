import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { recallProtoPath } from '@engram/contracts';
import type { recallv1KeepCase } from '@engram/grpc';

/**
 * An engram.recall.v1.Recall client as any gRPC client sees the service: fields in the proto's
 * snake_case (no camelCase conversion), int64 as numbers, defaults filled in: the generated
 * `recallv1KeepCase.RecallClient` by default, or `C`, the caller's narrower view of the rpcs it
 * calls (tests and `engram bench recall` type only what they use).
 */
export function recallGrpcClient<C extends { close(): void } = recallv1KeepCase.RecallClient>(
  url: string,
): C {
  const definition = loadSync(recallProtoPath(), {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const loaded = loadPackageDefinition(definition) as unknown as recallv1KeepCase.ProtoGrpcType;
  return new loaded.engram.recall.v1.Recall(url, credentials.createInsecure()) as unknown as C;
}
