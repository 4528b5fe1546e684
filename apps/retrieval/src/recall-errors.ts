import { status } from '@grpc/grpc-js';
import {
  DownstreamUnavailableError,
  EmbeddingMismatchError,
  errorMessage,
  InvalidRecallRequestError,
  MisconfigurationError,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { tenantAccessStatus } from '@engram/grpc';
import { grpcFieldName } from './recall-proto';

const logger = new Logger('RecallGrpc');

/** The gRPC status and message of an error, with the field named as recall.proto names it. */
export function grpcStatusOf(error: unknown): { code: status; message: string } {
  if (error instanceof InvalidRecallRequestError) {
    const problem = error.message.slice(error.field.length + 2);
    return { code: status.INVALID_ARGUMENT, message: `${grpcFieldName(error.field)}: ${problem}` };
  }
  const tenancy = tenantAccessStatus(error);
  if (tenancy) return tenancy;
  if (error instanceof EmbeddingMismatchError || error instanceof MisconfigurationError) {
    return { code: status.FAILED_PRECONDITION, message: error.message };
  }
  if (error instanceof DownstreamUnavailableError) {
    return { code: status.UNAVAILABLE, message: error.message };
  }
  return { code: status.INTERNAL, message: `internal error: ${errorMessage(error)}` };
}

/** What a handler throws: Nest hands `{ code, message }` to grpc-js as the call's status. */
export function toRpcException(error: unknown): RpcException {
  const grpcStatus = grpcStatusOf(error);
  if (grpcStatus.code === status.INTERNAL || grpcStatus.code === status.UNAVAILABLE) {
    logger.error(grpcStatus.message, error instanceof Error ? error.stack : undefined);
  }
  return new RpcException(grpcStatus);
}
