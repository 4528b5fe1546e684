import { Tokenizer } from '@huggingface/tokenizers';

/**
 * Characters kept per allowed token before tokenizing. English averages about 4–5 characters per
 * WordPiece token, so this bound never cuts text the model would see, yet a pasted megabyte log
 * costs no more to tokenize than a page.
 */
const MAX_CHARS_PER_TOKEN = 64;

/** BERT WordPiece tokenizer of the MiniLM model: ids framed by [CLS] … [SEP], at most maxTokens. */
export class MiniLmTokenizer {
  private readonly tokenizer: Tokenizer;

  constructor(
    tokenizerJson: Record<string, unknown>,
    private readonly maxTokens: number,
  ) {
    if (!Number.isInteger(maxTokens) || maxTokens < 2) {
      throw new RangeError(`maxTokens must be an integer >= 2 ([CLS] and [SEP]), got ${maxTokens}`);
    }
    // The file asks for truncation and padding at 128. Tokenizers.js ignores both today; dropping
    // them keeps a future version that honours them from changing the ids. Both are done here.
    // Lower-casing and accent stripping come from the file's BertNormalizer, so no config is needed.
    this.tokenizer = new Tokenizer({ ...tokenizerJson, truncation: null, padding: null }, {});
  }

  encode(text: string): number[] {
    const { ids } = this.tokenizer.encode(text.slice(0, this.maxTokens * MAX_CHARS_PER_TOKEN));
    return truncateKeepingLast(ids, this.maxTokens);
  }
}

/**
 * Cuts to `max` ids but keeps the final one ([SEP]), as Hugging Face truncation does: the model
 * was trained only on sequences that end in [SEP].
 */
export function truncateKeepingLast(ids: readonly number[], max: number): number[] {
  if (ids.length <= max) return [...ids];
  return [...ids.slice(0, max - 1), ids[ids.length - 1]];
}
