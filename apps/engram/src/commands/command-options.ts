import { InvalidArgumentError } from 'commander';

// Parsers of command-line option values: a value that does not parse is refused by commander
// with the option's name and the message, before the command runs.

export function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new InvalidArgumentError('must be a whole number of at least 1');
  }
  return parsed;
}

/** `90d`, `12w`, `90` (days) → days. */
export function parseDays(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([dw]?)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('must be a duration like 90d or 12w');
  const days = Number(match[1]) * (match[2] === 'w' ? 7 : 1);
  if (!(days > 0)) throw new InvalidArgumentError('must be longer than 0 days');
  return days;
}

export function parseConfidence(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1) {
    throw new InvalidArgumentError('must be a number in (0, 1]');
  }
  return n;
}

/** A comma-separated, repeatable option whose items must be among `allowed`. */
export function listOf<T extends string>(allowed: readonly T[]) {
  return (value: string, previous: T[] = []): T[] => {
    const items = value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    for (const item of items) {
      if (!(allowed as readonly string[]).includes(item)) {
        throw new InvalidArgumentError(`must be one of ${allowed.join(', ')}, got ${item}`);
      }
    }
    return [...previous, ...(items as T[])];
  };
}
