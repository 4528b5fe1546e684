// The messages and services of Engram's gRPC APIs as TypeScript types, generated from
// schemas/proto by `npm run proto:types` (scripts/proto-types.mjs, @grpc/proto-loader's
// proto-loader-gen-types) into ./generated, which is not committed: build, typecheck, lint and
// test generate it first. Type-only: nothing here exists at run time.
//
// `X` is a message as it is sent (optional fields, enums by name or number): what a handler
// returns, what a client passes. `X__Output` is a message as it is received with
// PROTO_LOADER_OPTIONS (every field present, enums by name, int64 as numbers, the oneof's name in
// its virtual field): what a handler is given, what a client gets back.

/** engram.recall.v1 as the recall server and the Engram clients load it (camelCase fields). */
export type * as recallv1 from './generated/recall-v1';
/** engram.review.v1 as the distiller's review server and `engram review` load it. */
export type * as reviewv1 from './generated/review-v1';
/** engram.recall.v1 with the proto's snake_case field names (recallGrpcClient: keepCase). */
export type * as recallv1KeepCase from './generated/recall-v1.keep-case';
