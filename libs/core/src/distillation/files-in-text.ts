import { extractEntityMentions } from '../segmentation/entities';

// A path with at least one slash and a file name with an extension: `src/auth/refresh.ts`.
const PATH =
  /(?:^|[\s`'"([])((?:\.{0,2}\/)?(?:[\w@.-]+\/)+[\w@.-]+\.[A-Za-z][\w]{0,7})(?=$|[\s`'"(),:;\]!?]|\.(?:\s|$))/g;

/**
 * File paths a text names: paths with a slash (kept whole), and bare file names the entity
 * extractor knows (`package.json`, `README.md`). Distinct, in text order.
 */
export function filePathsIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(PATH)) found.push(match[1].replace(/^\.\//, ''));
  const baseNames = new Set(found.map((path) => path.split('/').pop()));
  for (const mention of extractEntityMentions(text)) {
    if (mention.kind === 'file' && !baseNames.has(mention.value)) found.push(mention.value);
  }
  return [...new Set(found)];
}

/**
 * The known paths (from tool calls) a text refers to: by whole path, or by base name when that
 * names exactly one known path.
 */
export function knownPathsIn(text: string, knownPaths: readonly string[]): string[] {
  const named = filePathsIn(text);
  const result = new Set<string>();
  for (const name of named) {
    if (knownPaths.includes(name)) {
      result.add(name);
      continue;
    }
    const candidates = knownPaths.filter(
      (path) => path.endsWith(`/${name}`) || path.split('/').pop() === name,
    );
    if (candidates.length === 1) result.add(candidates[0]);
  }
  return [...result];
}
