import { EngramError, isProgrammerError } from '@engram/errors';

/**
 * A dead letter's reason as a bounded label value: an EngramError's code (`decode_error`,
 * `invalid_event`, …), `programmer_error` for bugs (TypeError, RangeError, …), else
 * `unclassified`. Never the message: it may hold event text and is unbounded.
 */
export function deadLetterReason(error: unknown): string {
  if (error instanceof EngramError) return error.code.toLowerCase();
  if (isProgrammerError(error)) return 'programmer_error';
  return 'unclassified';
}
