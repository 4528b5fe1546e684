import { EngramError } from '../errors/engram-error';

/**
 * Why a caller may not do what it asked: no or an unknown token (`unauthenticated`), or a token
 * that does not cover the tenant asked for or whose role is too weak (`permission_denied`). The
 * gRPC edge maps the kinds to UNAUTHENTICATED and PERMISSION_DENIED.
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

/**
 * What a token may do, weakest first: `read` reads (recall, context, history, the graph, the
 * review list); `write` also writes an agent's notes (Remember) and feedback that does not vouch
 * for a memory; `admin` — a person's token, never an agent's — also teaches and verifies memories
 * (a `userVerified` memory: Remember as a user, Feedback confirm/correct) and decides reviews.
 */
export const TOKEN_ROLES = ['read', 'write', 'admin'] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];

/** One token's grant: the tenants it may reach and its role. */
export interface TokenGrant {
  readonly tenants: readonly string[];
  readonly role: TokenRole;
}

/** Bearer token → its grant (SPEC §7: "bearer-token auth mapped to tenants"; §12 tokens file). */
export type TenantTokens = ReadonlyMap<string, TokenGrant>;

/** `{ token: { tenants, role } }` (the tokens file's shape) as TenantTokens. */
export function tenantTokens(entries: Record<string, TokenGrant>): TenantTokens {
  return new Map(Object.entries(entries));
}

function roleRank(role: TokenRole): number {
  return TOKEN_ROLES.indexOf(role);
}

/**
 * The tenant a request reaches. Without configured tokens (a loopback server on one person's
 * machine, the CLI) the request names its tenant itself and may do anything. With tokens, the
 * `authorization: Bearer …` value must be a known token whose role is at least `needs`; an empty
 * tenant means the token's only tenant; any other tenant must be one the token allows. Returns
 * the requested tenant trimmed ('' when none could be decided: the scope check then refuses it,
 * naming the field).
 */
export function resolveTenant(
  tokens: TenantTokens | null,
  authorization: string | null | undefined,
  requestedTenant: string | null | undefined,
  needs: TokenRole = 'read',
  action = 'this call',
): string {
  const requested = requestedTenant?.trim() ?? '';
  if (tokens === null) return requested;
  const token = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization ?? '')?.[1];
  if (token === undefined) {
    throw new TenantAccessError('unauthenticated', 'authorization: a Bearer token is required');
  }
  const grant = tokens.get(token);
  if (grant === undefined) {
    throw new TenantAccessError('unauthenticated', 'authorization: unknown token');
  }
  if (roleRank(grant.role) < roleRank(needs)) {
    throw new TenantAccessError(
      'permission_denied',
      `authorization: ${action} needs ${needs === 'admin' ? 'an' : 'a'} ${needs} token; ` +
        `this one is ${grant.role}`,
    );
  }
  const allowed = grant.tenants;
  if (requested === '') return allowed.length === 1 ? allowed[0] : '';
  if (!allowed.includes(requested)) {
    throw new TenantAccessError(
      'permission_denied',
      `scope.tenant_id: this token may not reach tenant "${requested}"`,
    );
  }
  return requested;
}

/** Whether `host:port` listens on loopback only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackAddress(url: string): boolean {
  const host = /^\[([^\]]*)\]:\d+$/.exec(url)?.[1] ?? url.replace(/:\d+$/, '');
  const lower = host.toLowerCase();
  if (lower === 'localhost' || lower === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(lower);
}

/**
 * Refuses a server that would serve every tenant to the network: without tokens only loopback
 * is trusted (one person's laptop); any other address needs ENGRAM_GRPC_TOKENS_FILE.
 */
export function assertServable(url: string, tokens: TenantTokens | null, service: string): void {
  if (tokens !== null || isLoopbackAddress(url)) return;
  throw new TenantAccessError(
    'permission_denied',
    `${service} will not listen on ${url} without authentication: any client on the network ` +
      'could read and write every tenant. Set ENGRAM_GRPC_TOKENS_FILE to a tokens file ' +
      '({ "<token>": { "tenants": [...], "role": "read|write|admin" } }), or listen on loopback ' +
      '(127.0.0.1:PORT) only',
  );
}
