// gRPC pieces every gRPC server of Engram shares (recall, review): the standard health and
// reflection services, and per-call tenant resolution from the request metadata.
export * from './grpc-health';
export * from './grpc-tenancy';
export type * from './proto-types';
