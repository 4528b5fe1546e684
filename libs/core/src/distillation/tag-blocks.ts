/** A `<name>…</name>` region of a model's output; `closed` is false without a close tag. */
export interface TagBlock {
  content: string;
  closed: boolean;
  attributes: string;
  /** Offset of the opening tag and just past the block (its close tag, when closed). */
  start: number;
  end: number;
}

/**
 * Every `<name …>` block of `text`, tolerant of what models get wrong: tag names are matched
 * case-insensitively, attributes are allowed, and a block whose close tag is missing runs to the
 * next block of the same name, to the first `stopBefore` tag, or to the end of the text (it was
 * cut off). Blocks do not nest.
 */
export function findTagBlocks(
  text: string,
  name: string,
  stopBefore: readonly string[] = [],
): TagBlock[] {
  const blocks: TagBlock[] = [];
  const open = new RegExp(`<${name}(\\s[^<>]*)?>`, 'gi');
  const close = new RegExp(`</${name}\\s*>`, 'gi');
  let match: RegExpExecArray | null;
  while ((match = open.exec(text)) !== null) {
    const contentStart = match.index + match[0].length;
    close.lastIndex = contentStart;
    const closeMatch = close.exec(text);
    const nextOpen = indexOfTag(text, name, contentStart);
    const stop = Math.min(
      ...stopBefore.map((tag) => indexOfTag(text, tag, contentStart)),
      text.length,
    );
    const closed = closeMatch !== null && closeMatch.index < Math.min(nextOpen, stop);
    const contentEnd = closed ? closeMatch.index : Math.min(nextOpen, stop);
    blocks.push({
      content: text.slice(contentStart, contentEnd),
      closed,
      attributes: (match[1] ?? '').trim(),
      start: match.index,
      end: closed ? closeMatch.index + closeMatch[0].length : contentEnd,
    });
    open.lastIndex = closed ? closeMatch.index + closeMatch[0].length : contentEnd;
  }
  return blocks;
}

/** The first block of that name, or null. */
export function findTagBlock(
  text: string,
  name: string,
  stopBefore: readonly string[] = [],
): TagBlock | null {
  return findTagBlocks(text, name, stopBefore)[0] ?? null;
}

/** `text` without the given blocks (what lies between and around them). */
export function withoutBlocks(text: string, blocks: readonly TagBlock[]): string {
  let rest = '';
  let position = 0;
  for (const block of [...blocks].sort((a, b) => a.start - b.start)) {
    rest += text.slice(position, block.start);
    position = Math.max(position, block.end);
  }
  return rest + text.slice(position);
}

/** Position of the next opening tag `<name…>` at or after `from`, or Infinity. */
function indexOfTag(text: string, name: string, from: number): number {
  const pattern = new RegExp(`<${name}(\\s[^<>]*)?>`, 'gi');
  pattern.lastIndex = from;
  const match = pattern.exec(text);
  return match === null ? Infinity : match.index;
}

/** The value of `key="…"` (or '…') in a tag's attributes, or null. */
export function attributeValue(attributes: string, key: string): string | null {
  const match = new RegExp(`\\b${key}\\s*=\\s*("([^"]*)"|'([^']*)')`, 'i').exec(attributes);
  return match === null ? null : (match[2] ?? match[3] ?? '').trim() || null;
}
