// The retrieval-quality corpus: every entry of two public changelogs installed in node_modules
// (kafkajs, MIT; rxjs, Apache-2.0) as one memory document each. Read at run time, never copied
// into the repo; entries are named by a stable id (package@version#hash of the entry text), which
// is what queries.json labels refer to. `node corpus.js [--grep WORD]` lists the entries.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryType } from '@engram/contracts';

export interface CorpusEntry {
  /** `package@version#hash`: stable while the entry text and version are. */
  id: string;
  pkg: string;
  version: string;
  /** The changelog heading the entry sits under (Fixed, Features, BREAKING CHANGES…). */
  section: string;
  memoryType: MemoryType;
  /** The memory content: "kafkajs 2.2.4 fixed: Rejoin group after ILLEGAL_GENERATION error". */
  content: string;
}

/** The changelogs read, relative to the repository root. */
export const CHANGELOGS = [
  { pkg: 'kafkajs', file: 'node_modules/kafkajs/CHANGELOG.md' },
  { pkg: 'rxjs', file: 'node_modules/rxjs/CHANGELOG.md' },
] as const;

/**
 * What a changelog section says about its entries, as the memory type a coding agent would file
 * it under: a fix names a failure (error_pattern), a breaking change or removal something that
 * bites on upgrade (gotcha), a feature a way to do something (pattern), a deprecation or a
 * behaviour change a decision of the maintainers, a performance note an insight into the module.
 */
const SECTION_TYPES: readonly [RegExp, MemoryType][] = [
  [/fix/i, 'error_pattern'],
  [/break|remov|revert/i, 'gotcha'],
  [/add|feature|support/i, 'pattern'],
  [/perf/i, 'module_insight'],
  [/change|deprecat|refactor|chore/i, 'decision'],
];

/** A change marked BREAKING is a gotcha whatever its section (kafkajs lists some under Changed). */
function memoryTypeOf(section: string, text: string): MemoryType {
  if (/\bBREAKING\b/.test(text)) return 'gotcha';
  return SECTION_TYPES.find(([pattern]) => pattern.test(section))?.[1] ?? 'module_insight';
}

const VERSION_HEADING = /^#{1,2}\s+\[?v?(\d+\.\d+\.\d+[^\]\s)]*)/;
const SECTION_HEADING = /^#{3,}\s+(.+?)\s*$/;
const BULLET = /^(\s*)[-*]\s+(.*)$/;
/** `**scope:** text` (rxjs) — the scope alone, with no text, heads nested bullets. */
const SCOPE = /^\*\*([^*]+?):?\*\*:?\s*(.*)$/;

/** Markdown to plain text: links to their text, commit and issue references and markup gone. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/\(\[[^\]]*\]\([^)]*\)\)/g, '') // ([#7444](…)) ([8bbfa4e](…))
    .replace(/,?\s*closes\s+(\[[^\]]*\]\([^)]*\)[,\s]*)+/gi, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s#\d+\b/g, '') // kafkajs: "… error #1474"
    .replace(/[`*]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function entryId(pkg: string, version: string, content: string): string {
  const hash = createHash('sha256').update(`${pkg}\n${version}\n${content}`).digest('hex');
  return `${pkg}@${version}#${hash.slice(0, 10)}`;
}

/** The bullet entries of one changelog, continuation lines joined, nested scopes prefixed. */
export function parseChangelog(pkg: string, markdown: string): CorpusEntry[] {
  const entries = new Map<string, CorpusEntry>();
  let version: string | null = null;
  let section = '';
  let parent: { indent: number; scope: string } | null = null;
  let open: { indent: number; lines: string[] } | null = null;
  const flush = () => {
    if (open === null || version === null) return;
    const raw = open.lines.join(' ').trim();
    open = null;
    const scoped = SCOPE.exec(raw);
    const scope = scoped ? scoped[1].trim() : null;
    const body = plainText(scoped ? scoped[2] : raw);
    if (body === '') return; // a scope heading nested bullets, or an empty bullet
    const prefix = scope ?? parent?.scope;
    const what = section.toLowerCase().replace(/\s+/g, ' ');
    const content = `${pkg} ${version} ${what}: ${prefix ? `${prefix}: ` : ''}${body}`;
    const id = entryId(pkg, version, content);
    const memoryType = memoryTypeOf(section, content);
    entries.set(id, { id, pkg, version, section, memoryType, content });
  };
  for (const line of markdown.split('\n')) {
    const versionMatch = VERSION_HEADING.exec(line);
    const sectionMatch = versionMatch ? null : SECTION_HEADING.exec(line);
    const bullet = BULLET.exec(line);
    if (versionMatch || sectionMatch) {
      flush();
      parent = null;
      if (versionMatch) [version, section] = [versionMatch[1], 'notes'];
      else section = sectionMatch![1];
    } else if (bullet) {
      flush();
      const indent = bullet[1].length;
      if (parent !== null && indent <= parent.indent) parent = null;
      const scopeOnly = SCOPE.exec(bullet[2]);
      if (scopeOnly && plainText(scopeOnly[2]) === '') {
        parent = { indent, scope: scopeOnly[1].trim() };
      } else {
        open = { indent, lines: [bullet[2]] };
      }
    } else if (open !== null && line.trim() !== '' && /^\s/.test(line)) {
      open.lines.push(line.trim());
    } else if (line.trim() !== '') {
      flush(); // prose between bullets
    }
  }
  flush();
  return [...entries.values()];
}

/** Every entry of every changelog, in file order. */
export function loadCorpus(root: string): CorpusEntry[] {
  return CHANGELOGS.flatMap(({ pkg, file }) =>
    parseChangelog(pkg, readFileSync(join(root, file), 'utf8')),
  );
}

if (require.main === module) {
  const at = process.argv.indexOf('--grep');
  const word = at === -1 ? null : new RegExp(process.argv[at + 1], 'i');
  for (const entry of loadCorpus(process.cwd())) {
    if (word === null || word.test(entry.content)) {
      console.log(`${entry.id}\t${entry.memoryType}\t${entry.content}`);
    }
  }
}
