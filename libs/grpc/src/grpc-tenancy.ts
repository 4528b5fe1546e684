import type { Metadata } from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { resolveTenant, TenantAccessError, type TenantTokens, type TokenRole } from '@engram/core';

/** The bearer token of a call (`authorization` metadata), if it sent one. */
export function authorizationOf(metadata: Metadata | undefined): string | undefined {
  const value = metadata?.get('authorization')[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

/**
 * The tenant a call may reach (SPEC §11): its bearer token's, checked against the one it names
 * and against the role the call needs (`read` unless said). Shared by Engram's gRPC APIs
 * (engram.recall.v1, engram.review.v1).
 */
export function requestTenant(
  tokens: TenantTokens | null,
  metadata: Metadata | undefined,
  scope: { tenantId?: string } | null | undefined,
  needs: TokenRole = 'read',
  action?: string,
): string {
  return resolveTenant(tokens, authorizationOf(metadata), scope?.tenantId, needs, action);
}

/** The gRPC status of a refused call: UNAUTHENTICATED or PERMISSION_DENIED; null otherwise. */
export function tenantAccessStatus(error: unknown): { code: status; message: string } | null {
  if (!(error instanceof TenantAccessError)) return null;
  return {
    code: error.kind === 'unauthenticated' ? status.UNAUTHENTICATED : status.PERMISSION_DENIED,
    message: error.message,
  };
}
