import { errorMessage } from '@engram/core';
import { status } from '@grpc/grpc-js';
import { ReviewRequestError } from '@engram/app-distiller';

// What an MCP tool says when its gRPC call fails: the message of a tool result with isError, for
// the agent (and the person reading its transcript) to act on. The statuses a setup problem
// causes — nothing listening, no or a wrong token, a token without the role or tenant — say what
// to do; a request the server refused as written says the server's reason.

/** The service a tool called, as the message names it. */
export interface CalledService {
  /** "recall API" or "review API". */
  name: string;
  url: string;
  /** The variable that moves it (ENGRAM_RECALL_GRPC_URL, ENGRAM_REVIEW_GRPC_URL). */
  urlVariable: string;
  /** The tenant the MCP server acts for. */
  tenantId: string;
}

/** The gRPC status of a failed call: on the error, or on its cause (ReviewGrpcClient wraps). */
export function grpcStatusOf(error: unknown): number | null {
  for (let e: unknown = error, depth = 0; e && depth < 3; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function detailsOf(error: unknown): string {
  const details = (error as { details?: unknown } | null)?.details;
  if (typeof details === 'string' && details !== '') return details;
  const cause = (error as { cause?: { details?: unknown } } | null)?.cause?.details;
  return typeof cause === 'string' && cause !== '' ? cause : errorMessage(error);
}

/** The message of a failed tool call. */
export function toolErrorMessage(error: unknown, service: CalledService): string {
  const where = `the ${service.name} at ${service.url}`;
  if (error instanceof ReviewRequestError) {
    return error.code === 'timeout'
      ? `${where} did not answer in time: ${error.message}`
      : `${service.name}: ${error.message}`;
  }
  const details = detailsOf(error);
  switch (grpcStatusOf(error)) {
    case status.UNAVAILABLE:
      return (
        `engram start is not running at ${service.url} (${service.name}): start it with ` +
        `\`engram start\`, or point ${service.urlVariable} at it (${details})`
      );
    case status.UNAUTHENTICATED:
      return (
        `${where} refused the call (${details}): set ENGRAM_GRPC_TOKEN for \`engram mcp\` to a ` +
        'token of the server’s ENGRAM_GRPC_TOKENS_FILE'
      );
    case status.PERMISSION_DENIED:
      return (
        `${where} denied the call (${details}): the token in ENGRAM_GRPC_TOKEN lacks the role ` +
        `or the tenant this needs (\`engram mcp\` acts for tenant "${service.tenantId}", --tenant)`
      );
    case status.DEADLINE_EXCEEDED:
      return `${where} did not answer in time (${details})`;
    case status.INVALID_ARGUMENT:
    case status.NOT_FOUND:
    case status.FAILED_PRECONDITION:
    case status.ALREADY_EXISTS:
      return `${service.name}: ${details}`;
    case null:
    default:
      return `${where} failed: ${details}`;
  }
}
