// Small pieces of the text the commands print for people.

/** `1 memory`, `3 memories`. */
export function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Text on one line (whitespace runs as one space), cut at `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
