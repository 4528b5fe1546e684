import type { EpochMillis } from '@engram/contracts';

const DAY_MS = 86_400_000;

/** Milliseconds in a day. */
export const MS_PER_DAY = DAY_MS;

/** `HH:MM` in UTC: the clock time the transcript shows for an event. */
export function clockTime(at: EpochMillis): string {
  return new Date(at).toISOString().slice(11, 16);
}

/** `YYYY-MM-DD` in UTC. */
export function isoDay(at: EpochMillis): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** `YYYYMMDD` in UTC (proposal ids). */
export function compactDay(at: EpochMillis): string {
  return isoDay(at).replace(/-/g, '');
}

/** "42 s", "12 min", "1 h 5 min". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/** The smallest of the numbers, or Infinity for none (no spread: sessions can be long). */
export function earliest(values: Iterable<number>): number {
  let min = Infinity;
  for (const value of values) if (value < min) min = value;
  return min;
}

/** The largest of the numbers, or -Infinity for none. */
export function latest(values: Iterable<number>): number {
  let max = -Infinity;
  for (const value of values) if (value > max) max = value;
  return max;
}
