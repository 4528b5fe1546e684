import { beforeAll, describe, expect, it } from 'vitest';
import { miniLmModelDir } from './minilm-artifact';
import { readMiniLmFiles } from './minilm-files';
import { MiniLmTokenizer, truncateKeepingLast } from './minilm-tokenizer';

const CLS = 101;
const SEP = 102;

describe('truncateKeepingLast', () => {
  it('should keep short sequences whole', () => {
    expect(truncateKeepingLast([CLS, 7, SEP], 4)).toEqual([CLS, 7, SEP]);
  });

  it('should cut to the limit but keep the final [SEP]', () => {
    expect(truncateKeepingLast([CLS, 1, 2, 3, 4, SEP], 4)).toEqual([CLS, 1, 2, SEP]);
  });
});

describe('MiniLmTokenizer (the model’s tokenizer.json)', () => {
  let files: Awaited<ReturnType<typeof readMiniLmFiles>>;

  beforeAll(async () => {
    files = await readMiniLmFiles(miniLmModelDir(process.env.ENGRAM_MODELS_DIR || undefined));
  });

  it('should frame lower-cased WordPiece ids with [CLS] and [SEP]', () => {
    const tokenizer = new MiniLmTokenizer(files.tokenizer, 256);
    // Ids checked against the reference Rust tokenizer (Python `tokenizers`) on the same file.
    expect(tokenizer.encode('Fix the AUTH bug!')).toEqual([
      CLS,
      8081,
      1996,
      8740,
      2705,
      11829,
      999,
      SEP,
    ]);
    expect(tokenizer.encode('')).toEqual([CLS, SEP]);
  });

  it('should truncate to maxTokens, ending in [SEP], ignoring the file’s own 128 limit', () => {
    const long = 'word '.repeat(1_000);
    expect(new MiniLmTokenizer(files.tokenizer, 256).encode(long)).toHaveLength(256);
    expect(new MiniLmTokenizer(files.tokenizer, 256).encode(long).at(-1)).toBe(SEP);
    expect(new MiniLmTokenizer(files.tokenizer, 16).encode(long)).toHaveLength(16);
    expect(new MiniLmTokenizer(files.tokenizer, 256).encode('word '.repeat(200))).toHaveLength(202);
  });

  it('should refuse a limit with no room for [CLS] and [SEP]', () => {
    expect(() => new MiniLmTokenizer(files.tokenizer, 1)).toThrow(RangeError);
  });
});
