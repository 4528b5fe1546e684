/**
 * A model-independent token estimate: about four characters per token for English and code
 * (the estimate pi's and Mastra's compaction utilities use). Budgets built on it are approximate
 * by design; the LLM client enforces its own budget with the same rule.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** The text cut to about `maxTokens`, at a line or word break when one is near, with "…". */
export function truncateToTokens(text: string, maxTokens: number): string {
  const maxChars = Math.max(0, maxTokens * CHARS_PER_TOKEN);
  return truncateChars(text, maxChars);
}

/** The text cut to at most `maxChars` characters (the ellipsis included). */
export function truncateChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 1) return text.slice(0, Math.max(0, maxChars));
  const cut = text.slice(0, maxChars - 1);
  const lastBreak = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf(' '));
  const head = lastBreak >= cut.length * 0.8 ? cut.slice(0, lastBreak) : cut;
  return `${head.trimEnd()}…`;
}
