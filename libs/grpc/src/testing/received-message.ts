// Messages as a handler or a client really gets them: encoded as a peer sends them, decoded with
// PROTO_LOADER_OPTIONS, through the same @grpc/proto-loader definitions the servers load. Specs
// build their requests with these rather than by hand, so each is exactly the generated
// `X__Output` (every field present, enums by name) that the handler is typed to take.
import { PROTO_LOADER_OPTIONS, recallProtoPath, reviewProtoPath } from '@engram/contracts';
import { loadSync, type PackageDefinition, type ServiceDefinition } from '@grpc/proto-loader';
import type { recallv1, reviewv1 } from '../proto-types';

/** The rpc names of a generated service definition (without its index signature). */
type RpcOf<D> = keyof {
  [K in keyof D as string extends K ? never : number extends K ? never : K]: D[K];
} &
  string;
type Sent<D, M extends keyof D> = D[M] extends { requestSerialize: (value: infer I) => Buffer }
  ? I
  : never;
type Given<D, M extends keyof D> = D[M] extends { requestDeserialize: (bytes: Buffer) => infer O }
  ? O
  : never;
type Answered<D, M extends keyof D> = D[M] extends {
  responseSerialize: (value: infer I) => Buffer;
}
  ? I
  : never;
type Received<D, M extends keyof D> = D[M] extends {
  responseDeserialize: (bytes: Buffer) => infer O;
}
  ? O
  : never;

const loaded = new Map<string, PackageDefinition>();

/** Both directions of one service's messages through its loaded definition. */
function wire<D>(protoPath: () => string, service: string) {
  const method = (rpc: string) => {
    const path = protoPath();
    let definition = loaded.get(path);
    if (definition === undefined) {
      definition = loadSync(path, { ...PROTO_LOADER_OPTIONS });
      loaded.set(path, definition);
    }
    return (definition[service] as ServiceDefinition)[rpc];
  };
  return {
    /** `request` as the server's handler of `rpc` is given it. */
    given: <M extends RpcOf<D>>(rpc: M, request: Sent<D, M>): Given<D, M> => {
      const m = method(rpc);
      return m.requestDeserialize(m.requestSerialize(request as object)) as Given<D, M>;
    },
    /** A handler's answer to `rpc` as a client (PROTO_LOADER_OPTIONS) receives it. */
    received: <M extends RpcOf<D>>(rpc: M, response: Answered<D, M>): Received<D, M> => {
      const m = method(rpc);
      return m.responseDeserialize(m.responseSerialize(response as object)) as Received<D, M>;
    },
  };
}

const recall = wire<recallv1.RecallDefinition>(recallProtoPath, 'engram.recall.v1.Recall');
const review = wire<reviewv1.ReviewDefinition>(reviewProtoPath, 'engram.review.v1.Review');

export const recallRequestAsGiven = recall.given;
export const recallResponseAsReceived = recall.received;
export const reviewRequestAsGiven = review.given;
export const reviewResponseAsReceived = review.received;
