import { filePathsIn } from '../distillation/files-in-text';
import { classifyAssertions, sentencesOf } from '../distillation/extractive/assertions';
import { requestAsAction } from '../distillation/extractive/actions';
import {
  commandWords,
  coreCommand,
  errorLine,
  isBookkeeping,
} from '../distillation/extractive/errors';
import { titleOf } from '../distillation/reflector/proposal-builder';
import { oneLine } from '../distillation/transcript';
import { hookResponseFailure } from '../hooks/claude-code-hooks';
import { gitRevertTarget } from '../observation/revert-detection';
import { classifyNote } from '../observation/rules/remember-request.rule';
import { contentStems } from '../retrieval/recall-merge';
import { normaliseErrorMessage } from '../observation/error-normalisation';
import { redactJsonText, redactSecrets } from '../redaction';
import { extractEntities } from '../segmentation/entities';
import { intentKeywords, keywordsOfToken } from '../segmentation/intent-keywords';

/**
 * Text shaped to make a backtracking regular expression quadratic (issue #19, finding 2): long
 * runs with no space or separator, separators repeated, dotted / dashed / plus-joined tokens,
 * paths, nested quotes, `name=` runs, hex and base64-ish runs. Each builds exactly `n`
 * characters. Test and bench support only.
 */
function repeat(unit: string, n: number): string {
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

export const ADVERSARIAL_SHAPES: Record<string, (n: number) => string> = {
  word: (n) => repeat('a', n),
  dotted: (n) => repeat('a.', n),
  dashed: (n) => repeat('a-', n),
  plus: (n) => repeat('a+', n),
  path: (n) => repeat('/ab', n),
  deepPath: (n) => `/tmp/${repeat('x', n - 6)}/`,
  winPath: (n) => repeat('a\\', n),
  slashes: (n) => repeat('/', n),
  dots: (n) => repeat('.', n),
  quotes: (n) => repeat('"\'`', n),
  nestedJson: (n) => repeat('{"a":"', n),
  assign: (n) => repeat('a=', n),
  colon: (n) => repeat('a:', n),
  numbers: (n) => repeat('1.', n),
  hex: (n) => repeat('ab12', n),
  base64: (n) => repeat('aB3+/x', n),
  at: (n) => repeat('a@', n),
  spaces: (n) => `${repeat(' ', n - 1)}x`,
  urlish: (n) => `http://${repeat('a', n - 7)}`,
  scheme: (n) => repeat('a+b.c-', n),
  secretNames: (n) => repeat('password=', n),
  bearer: (n) => repeat('Bearer ', n),
  keyPrefix: (n) => repeat('sk-', n),
  pem: (n) => repeat('-----BEGIN ', n),
  email: (n) => repeat('a@b.', n),
  mixed: (n) => repeat('src/a-b.c_d:12 ', n),
};

/** The core functions that run regular expressions over event text (prompts, tool calls). */
export const EVENT_TEXT_FUNCTIONS: Record<string, (text: string) => unknown> = {
  normaliseErrorMessage,
  redactSecrets,
  redactJsonText: (text) => redactJsonText(JSON.stringify({ command: text })),
  extractEntities,
  intentKeywords,
  keywordsOfToken,
  hookResponseFailure: (text) => hookResponseFailure({ error: text, stderr: text }),
  filePathsIn,
  gitRevertTarget,
  classifyNote,
  classifyAssertions,
  sentencesOf,
  requestAsAction,
  errorLine,
  coreCommand,
  commandWords,
  isBookkeeping,
  titleOf,
  oneLine,
  contentStems,
};
