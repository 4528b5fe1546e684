/**
 * Entity extraction for episodes (SPEC §4.4 `entities`) and cross-thread linking (seed 004 §2.3
 * "Entities"). The domain is code work, so an entity is something a developer names exactly:
 *
 * - `file`: a file's base name — the last segment of a path with a slash (`src/auth/refresh.ts` →
 *   `refresh.ts`, any extension), or a bare file name with a known source/config extension
 *   (`README.md`, `package.json`);
 * - `ticket`: a tracker id such as `ABC-123` (upper-case key, dash, number; `UTF-8`, `SHA-256` and
 *   similar standards are not tickets) or a `CVE-2024-12345`;
 * - `error`: an error class name (`TypeError`, `NullPointerException`) or a well-known errno code
 *   (`ENOENT`, `ECONNREFUSED`);
 * - `identifier`: a code symbol — camelCase / PascalCase with an inner capital (`TokenRefresher`,
 *   `parseHTTPResponse`), snake_case / SCREAMING_SNAKE (`user_id`, `MAX_RETRIES`), or any
 *   single identifier written in backticks (`` `refresh` ``).
 *
 * URLs are skipped whole. Everything is deterministic: mentions come back in text order.
 */

export type EntityKind = 'file' | 'ticket' | 'error' | 'identifier';

export interface EntityMention {
  kind: EntityKind;
  value: string;
}

/** Extensions a bare (slash-less) file name must end with to count as a file. */
const KNOWN_EXTENSIONS: readonly string[] = words(`
  ts tsx mts cts js jsx mjs cjs json jsonc md mdx yml yaml toml rs py go java kt kts rb php cs
  cpp cc c h hpp swift sh bash zsh sql html css scss sass less txt lock xml proto avsc gradle
  vue svelte ini cfg conf env csv ipynb tf dart scala ex exs erl lua graphql gql dockerfile
`);

/** Upper-case "KEY-123" prefixes that name a standard or a product version, not a ticket. */
const NON_TICKET_PREFIXES: ReadonlySet<string> = new Set(
  words(`
  UTF UCS SHA MD ISO ES ECMA TLS SSL HTTP HTTPS IPV AES RSA GPT PEP RFC
`),
);

/** errno-style codes (Node, libc) worth naming; other all-caps words starting with E are not. */
const ERRNO_CODES: ReadonlySet<string> = new Set(
  words(`
  ENOENT EACCES EPERM EEXIST ENOTDIR EISDIR EMFILE ENFILE EPIPE EADDRINUSE EADDRNOTAVAIL
  ECONNREFUSED ECONNRESET ECONNABORTED ETIMEDOUT ENOTFOUND ENOSPC ENOMEM EBUSY EAGAIN EINVAL
  ENOTEMPTY EHOSTUNREACH ENETUNREACH ERR_REQUIRE_ESM ERR_MODULE_NOT_FOUND
`),
);

/** File names that have no extension but are files all the same. */
const EXTENSIONLESS_FILES: ReadonlySet<string> = new Set(
  words(`
  makefile dockerfile rakefile gemfile procfile jenkinsfile vagrantfile license codeowners
  brewfile justfile
`),
);

const MIN_IDENTIFIER_LENGTH = 3;

// One scanner, alternatives in priority order: at a given position the first alternative that
// matches wins, and the leftmost match overall is taken, so mentions come out in text order.
// Paths and file names only start where a run of path characters starts (the lookbehinds), so a
// long unbroken run (a pasted blob) is scanned in linear, not quadratic, time.
const SCANNER = new RegExp(
  [
    String.raw`(?<url>https?:\/\/[^\s<>()[\]"'\x60]+)`,
    String.raw`\x60(?<code>[^\x60\n]{1,120})\x60`,
    String.raw`(?<![\w.@~-])(?<path>[\w.@~-]*(?:\/[\w.@-]+)+\/?)`,
    String.raw`\b(?<cve>CVE-\d{4}-\d{4,7})\b`,
    String.raw`\b(?<ticket>(?<ticketKey>[A-Z][A-Z0-9]{1,9})-[1-9]\d{0,6})\b`,
    String.raw`(?<![\w.-])(?<file>[\w-]+(?:\.[\w-]+)*\.(?:${KNOWN_EXTENSIONS.join('|')}))\b(?![(\w])`,
    String.raw`(?<word>[\w$]+)`,
  ].join('|'),
  'g',
);

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const GLOB_CHARACTERS = /[*?[\]{}]/;

/** Every entity mention of `text` in text order, repeats included. */
export function extractEntityMentions(text: string): EntityMention[] {
  const mentions: EntityMention[] = [];
  for (const match of text.matchAll(SCANNER)) {
    const groups = match.groups ?? {};
    if (groups.url !== undefined) continue;
    if (groups.code !== undefined) {
      const code = groups.code.trim().replace(/\(\)$/, '');
      if (IDENTIFIER.test(code) && code.length >= MIN_IDENTIFIER_LENGTH) {
        mentions.push({ kind: classifyWord(code) ?? 'identifier', value: code });
      } else {
        mentions.push(...extractEntityMentions(groups.code));
      }
    } else if (groups.path !== undefined) {
      const baseName = groups.path.replace(/\/+$/, '').split('/').pop() ?? '';
      if (/^[\w@-][\w.@-]*\.[A-Za-z][A-Za-z0-9]{0,9}$/.test(baseName)) {
        mentions.push({ kind: 'file', value: baseName });
      }
    } else if (groups.cve !== undefined) {
      mentions.push({ kind: 'ticket', value: groups.cve });
    } else if (groups.ticket !== undefined) {
      if (!NON_TICKET_PREFIXES.has(groups.ticketKey ?? '')) {
        mentions.push({ kind: 'ticket', value: groups.ticket });
      }
    } else if (groups.file !== undefined) {
      if (/[A-Za-z_]/.test(groups.file.slice(0, groups.file.lastIndexOf('.')))) {
        mentions.push({ kind: 'file', value: groups.file });
      }
    } else if (groups.word !== undefined) {
      const kind = classifyWord(groups.word);
      if (kind !== null) mentions.push({ kind, value: groups.word });
    }
  }
  return mentions;
}

/**
 * The distinct entities of `text` in first-seen order. Two spellings that differ only in case are
 * one entity (the first spelling is kept); compare entities with `entityKey`.
 */
export function extractEntities(text: string): string[] {
  return distinctEntities(extractEntityMentions(text).map((mention) => mention.value));
}

/** The comparison key of an entity: entities are case-insensitive. */
export function entityKey(entity: string): string {
  return entity.toLowerCase();
}

/** Distinct by `entityKey`, first spelling kept, first-seen order. */
export function distinctEntities(entities: Iterable<string>): string[] {
  const seen = new Map<string, string>();
  for (const entity of entities) {
    const key = entityKey(entity);
    if (!seen.has(key)) seen.set(key, entity);
  }
  return [...seen.values()];
}

/**
 * The base name of a path a tool touched, as a `file` entity: the last segment (either slash),
 * kept when it has a dot (`refresh.ts`, `.env`) or is a known extension-less file (`Makefile`);
 * directories (`src`), `.`/`..` and glob patterns (`*.ts`) give null.
 */
export function fileBaseName(path: string): string | null {
  const baseName =
    path
      .trim()
      .replace(/[/\\]+$/, '')
      .split(/[/\\]/)
      .pop() ?? '';
  if (baseName === '' || baseName === '.' || baseName === '..') return null;
  if (GLOB_CHARACTERS.test(baseName)) return null;
  if (baseName.includes('.') || EXTENSIONLESS_FILES.has(baseName.toLowerCase())) return baseName;
  return null;
}

/** Whitespace-separated words of a template literal. */
function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

function classifyWord(word: string): EntityKind | null {
  if (word.length < MIN_IDENTIFIER_LENGTH || !/^[A-Za-z_$]/.test(word)) return null;
  if (ERRNO_CODES.has(word)) return 'error';
  if (/^[A-Z][\w$]*(?:Error|Exception)$/.test(word)) return 'error';
  // snake_case / SCREAMING_SNAKE: an underscore between two letters or digits.
  if (/[A-Za-z0-9]_[A-Za-z0-9]/.test(word)) return 'identifier';
  // camelCase / PascalCase: lower-case letters and a capital after the first character.
  if (/[a-z]/.test(word) && /[A-Z]/.test(word.slice(1))) return 'identifier';
  return null;
}
