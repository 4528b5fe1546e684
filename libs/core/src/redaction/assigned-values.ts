import { PRIORITY_ASSIGNMENT, PRIORITY_ENTROPY, type Emit } from './detector-emit';
import { looksHighEntropy, looksLikeSecretValue } from './secret-values';
import type { RedactionKind } from './types';

// The value after a secret's name (an assignment, a flag, an XML element), read by hand so that
// a scan stays linear (see detectors.ts), and reported when it looks like a secret.

// ---------------------------------------------------------------------------------------------
// Reading an assigned value.

interface ValueSpan {
  /** The value without its quotes. */
  start: number;
  end: number;
  quoted: boolean;
  /** Just past the value and its closing quote. */
  next: number;
}

const BACKSLASH = 92;
const LF = 10;
const CR = 13;

export function isQuote(char: string | undefined): char is '"' | "'" | '`' {
  return char === '"' || char === "'" || char === '`';
}

/** Stops an unquoted value: whitespace, quotes, separators, closing brackets and `<`/`>`. */
function isUnquotedStop(code: number): boolean {
  return (
    code <= 32 || // whitespace and controls
    code === 34 || // "
    code === 39 || // '
    code === 96 || // `
    code === 44 || // ,
    code === 59 || // ;
    code === 38 || // &
    code === 41 || // )
    code === 93 || // ]
    code === 125 || // }
    code === 60 || // <
    code === 62 || // >
    code === 127
  );
}

/**
 * The value that starts at `position`: `"…"`, `'…'`, `` `…` `` (backslash escapes honoured, ending
 * at the line end when unterminated), `\"…\"` inside an escaped JSON string, or a bare value up
 * to the next stop character (a value starting with `<` reads through `>`, for `<your-key>`).
 */
export function readValue(text: string, position: number): ValueSpan | null {
  if (position >= text.length) return null;
  const first = text[position];
  if (isQuote(first)) {
    const quote = first.charCodeAt(0);
    let index = position + 1;
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (code === quote || code === LF || code === CR) break;
      index += code === BACKSLASH ? 2 : 1;
    }
    const end = Math.min(index, text.length);
    const closed = end < text.length && text.charCodeAt(end) === quote;
    return { start: position + 1, end, quoted: true, next: closed ? end + 1 : end };
  }
  const second = text[position + 1];
  if (first === '\\' && isQuote(second)) {
    const quote = second.charCodeAt(0);
    let index = position + 2;
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (code === LF || code === CR) break;
      if (code === BACKSLASH) {
        if (text.charCodeAt(index + 1) === quote) break;
        index += 2;
        continue;
      }
      if (code === quote) break;
      index += 1;
    }
    const end = Math.min(index, text.length);
    const closed = text.charCodeAt(end) === BACKSLASH;
    return { start: position + 2, end, quoted: true, next: closed ? end + 2 : end };
  }
  let index = position;
  if (first === '<') {
    index += 1;
    while (index < text.length && text[index] !== '>' && !isUnquotedStop(text.charCodeAt(index))) {
      index += 1;
    }
    if (text[index] === '>') index += 1;
  }
  while (index < text.length && !isUnquotedStop(text.charCodeAt(index))) index += 1;
  let end = index;
  // A sentence's full stop is not part of the value.
  if (
    end > position + 1 &&
    text[end - 1] === '.' &&
    (end === text.length || text.charCodeAt(end) <= 32)
  ) {
    end -= 1;
  }
  if (end === position) return null;
  return { start: position, end, quoted: false, next: index };
}

export function valueText(text: string, span: ValueSpan): string {
  return text.slice(span.start, span.end);
}

/** `password: str = "…"`, `apiKey: string = '…'`: skip a type annotation to the value. */
const TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

function skipTypeAnnotation(text: string, span: ValueSpan): ValueSpan | null {
  if (span.quoted || !TYPE_NAME.test(valueText(text, span))) return null;
  let index = span.next;
  while (text[index] === ' ' || text[index] === '\t') index += 1;
  if (text[index] !== '=' || text[index + 1] === '=' || text[index + 1] === '>') return null;
  index += 1;
  while (text[index] === ' ' || text[index] === '\t') index += 1;
  return readValue(text, index);
}

/**
 * Reads the value after a secret name and reports it when it qualifies. Returns where the
 * scan continues: past an accepted or rejected bare value, inside a rejected quoted one.
 */
export function reportAssignedValue(
  text: string,
  position: number,
  kind: RedactionKind,
  strength: 'secret' | 'key-like',
  emit: Emit,
  options: { separator?: string; rejectFlags?: boolean } = {},
): number {
  let span = readValue(text, position);
  if (span === null) return position;
  if (options.separator === ':') span = skipTypeAnnotation(text, span) ?? span;
  const value = valueText(text, span);
  const accepted =
    !(options.rejectFlags === true && value.startsWith('-')) &&
    (strength === 'secret' ? looksLikeSecretValue(value) : looksHighEntropy(value));
  if (accepted) {
    const leading = value.length - value.trimStart().length;
    const trailing = value.length - value.trimEnd().length;
    emit(
      strength === 'secret' ? kind : 'high-entropy-key',
      span.start + leading,
      span.end - trailing,
      strength === 'secret' ? PRIORITY_ASSIGNMENT : PRIORITY_ENTROPY,
    );
    return span.next;
  }
  return span.quoted ? position : span.next;
}
