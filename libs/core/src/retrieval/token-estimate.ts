/**
 * Token estimate for context budgets: ceil(characters / charsPerToken), characters counted as
 * Unicode code points. Four characters per token is the usual rule of thumb for English text with
 * BPE tokenizers (GPT and Claude families alike); code and non-English text run denser, so the
 * budget is a target, not a guarantee. It is deliberately tokenizer-free: the core has no model,
 * and the same text must cost the same everywhere. Rounding up per piece means a sum of pieces
 * never underestimates the whole.
 */
export function estimateTokens(text: string, charsPerToken = 4): number {
  if (text === '') return 0;
  return Math.ceil(codePointLength(text) / charsPerToken);
}

/**
 * `text` cut so that it is estimated at no more than `maxTokens`, ending with '…' when cut.
 * Cuts on code points (never splits a surrogate pair).
 */
export function clipToTokens(
  text: string,
  maxTokens: number,
  charsPerToken = 4,
): { text: string; clipped: boolean } {
  const maxChars = Math.floor(maxTokens * charsPerToken);
  const points = Array.from(text);
  if (points.length <= maxChars) return { text, clipped: false };
  if (maxChars <= 0) return { text: '', clipped: true };
  return {
    text: `${points
      .slice(0, maxChars - 1)
      .join('')
      .trimEnd()}…`,
    clipped: true,
  };
}

function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}
