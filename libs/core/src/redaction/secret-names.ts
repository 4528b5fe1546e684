import type { RedactionKind } from './types';

/**
 * Which names (variables, env keys, JSON/YAML keys, CLI flags, XML tags) hold secrets.
 *
 * A name is split into lower-case words (`AWS_SECRET_ACCESS_KEY`, `secretAccessKey`,
 * `x-api-key`, `APIKey` → words). The LAST secret word is the head of the name, as in English
 * compounds: `password_reset_token` is a token, `token_count` is a count. The name holds a
 * secret unless a word after the head qualifies it as metadata (`_count`, `_type`, `_url`,
 * `_expires_at`, `Name`, …) or a word before it makes it a quantity or a flag (`max_`, `is_`).
 *
 * - `secret` strength (password, passwd, pwd, pass, passphrase, secret, token, credentials,
 *   auth, authorization, api/private/access/signing/… key): an explicit value that looks like
 *   a secret is redacted (see `looksLikeSecretValue`).
 * - `key-like` strength (any other `key`, e.g. `STRIPE_KEY`, `key`): only a high-entropy value is
 *   redacted (see `looksHighEntropy`), so `sort_key: created_at` stays.
 *
 * In a dotted name (`spring.datasource.password`) the head must be in the last part, so
 * `token.close` is not a secret name.
 *
 * Word matching is exact except for compounds that end with the secret word (`PGPASSWORD`,
 * `accesstoken`, `clientsecret`, `apikey`), so `tokenizer`, `max_tokens`, `input_tokens`,
 * `secretary`, `secretsmanager`, `passwordless`, `bypass` and `monkey` are not secret names.
 */
export type SecretNameStrength = 'secret' | 'key-like';

export interface SecretNameClass {
  kind: RedactionKind;
  strength: SecretNameStrength;
}

/** Names longer than this are not identifiers anyone would store a secret under. */
const MAX_NAME_LENGTH = 100;

const WORD_PATTERN = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/** Words after the head that make the name describe a secret rather than hold one. */
const QUALIFIERS_AFTER = new Set([
  'age',
  'algorithm',
  'arg',
  'args',
  'argument',
  'arn',
  'at',
  'budget',
  'builder',
  'button',
  'callback',
  'category',
  'char',
  'chars',
  'characters',
  'class',
  'cmd',
  'command',
  'component',
  'config',
  'count',
  'counter',
  'counts',
  'created',
  'date',
  'delimiter',
  'dir',
  'directory',
  'disabled',
  'enabled',
  'end',
  'endpoint',
  'endpoints',
  'env',
  'error',
  'errors',
  'estimate',
  'event',
  'expiration',
  'expire',
  'expired',
  'expires',
  'expiry',
  'factory',
  'field',
  'fields',
  'file',
  'filename',
  'files',
  'flow',
  'fn',
  'form',
  'format',
  'fragment',
  'from',
  'func',
  'function',
  'generator',
  'handler',
  'header',
  'helper',
  'hint',
  'hook',
  'index',
  'input',
  'interval',
  'kind',
  'label',
  'labels',
  'len',
  'length',
  'lexer',
  'lifetime',
  'limit',
  'limits',
  'link',
  'listener',
  'location',
  'manager',
  'max',
  'message',
  'method',
  'min',
  'mode',
  'msg',
  'name',
  'names',
  'num',
  'number',
  'offset',
  'options',
  'page',
  'parser',
  'path',
  'paths',
  'pattern',
  'period',
  'placeholder',
  'policies',
  'policy',
  'position',
  'prefix',
  'prompt',
  'provider',
  'providers',
  'rate',
  'ratio',
  'ref',
  'reference',
  'regex',
  'regexp',
  'required',
  'reset',
  'rule',
  'rules',
  'schema',
  'scheme',
  'screen',
  'script',
  'separator',
  'settings',
  'size',
  'source',
  'start',
  'stdin',
  'storage',
  'store',
  'strategy',
  'strength',
  'suffix',
  'threshold',
  'time',
  'timeout',
  'timestamp',
  'toggle',
  'ttl',
  'type',
  'types',
  'updated',
  'uri',
  'url',
  'urls',
  'usage',
  'used',
  'validation',
  'validator',
  'var',
  'variable',
  'version',
  'versions',
  'view',
  'visible',
  'window',
]);

/** Words before the head that make the name a quantity or a flag (`max_token`, `has_password`). */
const QUALIFIERS_BEFORE = new Set([
  'allow',
  'count',
  'disable',
  'enable',
  'forgot',
  'has',
  'hide',
  'is',
  'max',
  'min',
  'no',
  'num',
  'require',
  'should',
  'show',
  'total',
  'use',
  'without',
]);

/** `<word>_key` names that hold secrets whatever their value looks like. */
const SECRET_KEY_PREFIXES = new Map<string, RedactionKind>([
  ['access', 'secret'],
  ['account', 'secret'],
  ['admin', 'secret'],
  ['api', 'api-key'],
  ['app', 'secret'],
  ['auth', 'secret'],
  ['client', 'secret'],
  ['consumer', 'secret'],
  ['enc', 'secret'],
  ['encryption', 'secret'],
  ['hmac', 'secret'],
  ['jwt', 'secret'],
  ['license', 'secret'],
  ['master', 'secret'],
  ['priv', 'private-key'],
  ['private', 'private-key'],
  ['secret', 'secret'],
  ['service', 'secret'],
  ['session', 'secret'],
  ['shared', 'secret'],
  ['sign', 'secret'],
  ['signing', 'secret'],
  ['subscription', 'secret'],
  ['webhook', 'secret'],
]);

/** `<word>_key` names that never hold secrets (`public_key`, `sort_key`, `cache_key`). */
const PUBLIC_KEY_PREFIXES = new Set([
  'cache',
  'composite',
  'dedup',
  'dedupe',
  'foreign',
  'hot',
  'idempotency',
  'lookup',
  'object',
  'partition',
  'primary',
  'pub',
  'public',
  'publishable',
  'routing',
  'row',
  'short',
  'shortcut',
  'sort',
  'unique',
]);

/** `password`, `pgpassword`, `passwords`, `passwd`, `passphrase`, but not `passwordless`. */
const PASSWORD_WORD = /(?:password|passwd|passphrase)s?$/;
/** `secret`, `clientsecret`, `secrets`, but not `secretary` or `secretsmanager`. */
const SECRET_WORD = /secrets?$/;

/** Every secret name contains one of these; most names are rejected by this test alone. */
const MAYBE_SECRET = /pass|pw|secret|token|key|cred|auth/i;

/** The lower-case words of a name. */
export function nameWords(name: string): string[] {
  return (name.match(WORD_PATTERN) ?? []).map((word) => word.toLowerCase());
}

/** What the word at `index` says about the name, if it is a secret word. */
function wordClass(words: readonly string[], index: number): SecretNameClass | null {
  const word = words[index];
  if (PASSWORD_WORD.test(word) || word === 'pwd' || word === 'pass' || word === 'pw') {
    return { kind: 'password', strength: 'secret' };
  }
  if (word === 'authorization') return { kind: 'authorization', strength: 'secret' };
  if (word === 'key' || word === 'keys') {
    const previous = index > 0 ? words[index - 1] : '';
    const secretKind = SECRET_KEY_PREFIXES.get(previous);
    if (secretKind !== undefined) return { kind: secretKind, strength: 'secret' };
    if (PUBLIC_KEY_PREFIXES.has(previous)) return null;
    return { kind: 'high-entropy-key', strength: 'key-like' };
  }
  if (word.endsWith('key') && word.length > 3) {
    const secretKind = SECRET_KEY_PREFIXES.get(word.slice(0, -3));
    if (secretKind !== undefined) return { kind: secretKind, strength: 'secret' };
  }
  if (SECRET_WORD.test(word)) return { kind: 'secret', strength: 'secret' };
  if (word.endsWith('token')) return { kind: 'token', strength: 'secret' };
  if (word.startsWith('credential') || word === 'creds') {
    return { kind: 'credential', strength: 'secret' };
  }
  // `auth` alone names a credential (`"auth": "<base64>"` in docker config.json, `npm_auth`)
  // but is mostly a prefix (`auth_callback`, `AUTH_FOLLOW_UP`): only as the last word.
  if (word === 'auth' && index === words.length - 1) {
    return { kind: 'credential', strength: 'secret' };
  }
  return null;
}

/**
 * Whether a name holds a secret, and which kind; null for ordinary names. Case-insensitive.
 */
export function classifySecretName(name: string): SecretNameClass | null {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || !MAYBE_SECRET.test(name)) return null;
  const words = nameWords(name);
  let head = -1;
  let headClass: SecretNameClass | null = null;
  for (let index = 0; index < words.length; index += 1) {
    const found = wordClass(words, index);
    if (found !== null) {
      head = index;
      headClass = found;
    }
  }
  if (headClass === null) return null;
  for (let index = head + 1; index < words.length; index += 1) {
    if (QUALIFIERS_AFTER.has(words[index])) return null;
  }
  for (let index = 0; index < head; index += 1) {
    if (QUALIFIERS_BEFORE.has(words[index])) return null;
  }
  // In a dotted name the head must be in the last part: `db.password`, `aws.secret.key`, but
  // not `token.close`.
  const lastPartWords = nameWords(name.slice(name.lastIndexOf('.') + 1)).length;
  if (head < words.length - lastPartWords) return null;
  const joined = words.join('');
  if (
    headClass.strength === 'secret' &&
    (joined.includes('secretaccesskey') || joined.includes('awssecretkey'))
  ) {
    return { kind: 'aws-secret-access-key', strength: 'secret' };
  }
  return headClass;
}

/** True when values under this name are secrets (the `secret` strength). */
export function isSecretName(name: string): boolean {
  return classifySecretName(name)?.strength === 'secret';
}
