import { EngramError } from '../errors/engram-error';

/**
 * Why a caller may not read a tenant: no or an unknown token (`unauthenticated`), or a token that
 * does not cover the tenant asked for (`permission_denied`). The gRPC edge maps the kinds to
 * UNAUTHENTICATED and PERMISSION_DENIED.
 */
export class TenantAccessError extends EngramError {
  readonly code = 'TENANT_ACCESS_DENIED';
  readonly retriable = false;

  constructor(
    readonly kind: 'unauthenticated' | 'permission_denied',
    message: string,
  ) {
    super(message, { kind });
  }
}

/** Bearer token → the tenants it may read (SPEC §7: "bearer-token auth mapped to tenants"). */
export type TenantTokens = ReadonlyMap<string, readonly string[]>;

/**
 * The tenant a request reads. Without configured tokens (a trusted network, the CLI) the request
 * names its tenant itself. With tokens, the `authorization: Bearer …` value must be a known token;
 * an empty tenant means the token's only tenant; any other tenant must be one the token allows.
 * Returns the requested tenant trimmed ('' when none could be decided: the scope check then
 * refuses it, naming the field).
 */
export function resolveTenant(
  tokens: TenantTokens | null,
  authorization: string | null | undefined,
  requestedTenant: string | null | undefined,
): string {
  const requested = requestedTenant?.trim() ?? '';
  if (tokens === null) return requested;
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (token === undefined) {
    throw new TenantAccessError('unauthenticated', 'authorization: a Bearer token is required');
  }
  const allowed = tokens.get(token);
  if (allowed === undefined) {
    throw new TenantAccessError('unauthenticated', 'authorization: unknown token');
  }
  if (requested === '') return allowed.length === 1 ? allowed[0] : '';
  if (!allowed.includes(requested)) {
    throw new TenantAccessError(
      'permission_denied',
      `scope.tenant_id: this token may not read tenant "${requested}"`,
    );
  }
  return requested;
}
