import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, type EngramConfig } from './engram-config';

/** What a token may do (the same names as core's TokenRole): read < write < admin. */
export type GrpcTokenRole = 'read' | 'write' | 'admin';

/** Bearer token → its tenants and role; structurally core's TenantTokens. */
export type GrpcTokens = ReadonlyMap<
  string,
  { readonly tenants: readonly string[]; readonly role: GrpcTokenRole }
>;

/** Short enough to paste, long enough not to guess. */
const MIN_TOKEN_CHARS = 16;

const grantSchema = z
  .object({
    tenants: z.array(z.string().trim().min(1)).min(1, 'at least one tenant'),
    role: z.enum(['read', 'write', 'admin']),
  })
  .strict();

const tokensFileSchema = z.record(z.string(), grantSchema).superRefine((tokens, context) => {
  const keys = Object.keys(tokens);
  if (keys.length === 0) context.addIssue({ code: 'custom', message: 'at least one token' });
  for (const token of keys) {
    const problem =
      token.length < MIN_TOKEN_CHARS
        ? `a token has at least ${MIN_TOKEN_CHARS} characters`
        : /^[\x21-\x7e]+$/.test(token)
          ? null
          : 'a token is printable ASCII without spaces';
    if (problem !== null) context.addIssue({ code: 'custom', path: [token], message: problem });
  }
});

/**
 * The tokens of ENGRAM_GRPC_TOKENS_FILE, JSON `{ "<token>": { "tenants": [...], "role":
 * "read|write|admin" } }`, validated; a missing, unreadable or invalid file is a ConfigError
 * naming the file, the entry and the fix (a server must not start open by mistake). The file
 * is read as given: keep it 0600.
 */
export function parseGrpcTokens(text: string, source: string): GrpcTokens {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([
      `ENGRAM_GRPC_TOKENS_FILE: ${source} is not JSON (${(error as Error).message}); ` +
        'fix: { "<token>": { "tenants": ["<tenant>"], "role": "read|write|admin" } }',
    ]);
  }
  const parsed = tokensFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        // Never echo a token into logs: name the entry by its position instead.
        const [first, ...rest] = issue.path;
        const entry =
          first === undefined
            ? ''
            : `token #${Object.keys(json as object).indexOf(String(first)) + 1}` +
              rest.map((part) => `.${String(part)}`).join('');
        return (
          `ENGRAM_GRPC_TOKENS_FILE: ${source}${entry ? ` ${entry}` : ''}: ${issue.message} ` +
          '(fix: { "<token>": { "tenants": ["<tenant>"], "role": "read|write|admin" } })'
        );
      }),
    );
  }
  return new Map(Object.entries(parsed.data));
}

/** The servers' tokens (config.grpc.tokensFile read and validated); null when none is set. */
export function grpcTokensOf(config: Pick<EngramConfig, 'grpc'>): GrpcTokens | null {
  const file = config.grpc.tokensFile;
  if (file === undefined) return null;
  let text: string;
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([
      `ENGRAM_GRPC_TOKENS_FILE: cannot read ${file} (${(error as Error).message}); ` +
        'fix: point it at a readable JSON tokens file, or unset it',
    ]);
  }
  return parseGrpcTokens(text, file);
}
