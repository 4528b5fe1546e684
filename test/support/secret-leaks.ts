import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CorpusSecret } from '../../libs/core/src/redaction/secret-corpus';

/**
 * Where the secrets of a corpus survive: every file under `dir` (SQLite databases, their WAL,
 * spools; read as bytes) and the named texts (rpc answers, stderr). One line per leak,
 * `<secret kind> in <where>`; empty when everything was redacted. A multi-line secret (a PEM
 * block) is looked for by its longest line, what a reader could copy. Test support only.
 */
export function secretLeaks(
  corpus: readonly CorpusSecret[],
  dir: string,
  texts: Record<string, string> = {},
): string[] {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
  const places: [string, string][] = [
    ...files.map((file): [string, string] => [file, readFileSync(file).toString('latin1')]),
    ...Object.entries(texts),
  ];
  const leaks: string[] = [];
  for (const c of corpus) {
    const probe = c.secret.split('\n').sort((a, b) => b.length - a.length)[0];
    for (const [where, text] of places) {
      if (text.includes(probe)) leaks.push(`${c.name} in ${where}`);
    }
  }
  return leaks;
}

/** Whether any file under `dir` holds a redaction marker (the test wrote secrets at all). */
export function holdsRedactionMarker(dir: string): boolean {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .some((entry) =>
      readFileSync(join(entry.parentPath, entry.name), 'latin1').includes('[REDACTED:'),
    );
}
