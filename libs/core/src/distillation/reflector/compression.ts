/**
 * Compression validation (seed 001, after Mastra's reflector): a reflection must be shorter than
 * what it reflects. When it is not, the reflector retries with escalating guidance, levels 0 → 1
 * → 2; after level 2 it gives up (and the extractive reflector stands in).
 */
export const COMPRESSION_GUIDANCE = [
  '',
  '\n\nIMPORTANT: Your previous output was too large. Aim for 8/10 detail level. Merge more aggressively, especially for observations older than 48 hours.',
  '\n\nCRITICAL: Your output must be significantly shorter. Aim for 6/10 detail level. Keep only 🔴 observations and the most critical 🟡 patterns. Drop all 🟢 items entirely.',
] as const;

export type CompressionLevel = 0 | 1 | 2;
export const MAX_COMPRESSION_LEVEL: CompressionLevel = 2;

/** The seed's validateCompression: output tokens strictly below input tokens. */
export function validateCompression(inputTokens: number, outputTokens: number): boolean {
  return outputTokens < inputTokens;
}

export type CompressionDecision =
  | { verdict: 'accept' }
  | { verdict: 'retry'; level: CompressionLevel; guidance: string }
  | { verdict: 'give-up'; reason: string };

/** What to do after an attempt at `level` produced `outputTokens` from `inputTokens`. */
export function compressionDecision(
  level: CompressionLevel,
  inputTokens: number,
  outputTokens: number,
): CompressionDecision {
  if (validateCompression(inputTokens, outputTokens)) return { verdict: 'accept' };
  if (level >= MAX_COMPRESSION_LEVEL) {
    return {
      verdict: 'give-up',
      reason: `output of ${outputTokens} tokens is not shorter than the input of ${inputTokens} after guidance level ${level}`,
    };
  }
  const next = (level + 1) as CompressionLevel;
  return { verdict: 'retry', level: next, guidance: COMPRESSION_GUIDANCE[next] };
}
