import type { DistilledFact, Priority } from './types';

/** A fact line as written by a model or by formatFact: priority, optional clock time, text. */
export interface FactLine {
  priority: Priority;
  /** `HH:MM` as written (normalised to two-digit hours), or null. */
  time: string | null;
  text: string;
}

const MARKER = '(🔴|🟡|🟢)\\uFE0F?';
const TIME = '\\((\\d{1,2}:\\d{2})\\)';
const BULLET = '(?:[-*•+]|\\d+[.)])';

// `* 🔴 (09:15) text`, `- [🟡] text`, `🟢 text`, and seed 001's own `(09:30) 🟢 text`.
const FACT_LINE = new RegExp(
  `^\\s*(?:${BULLET}\\s*)?(?:${TIME}\\s*)?\\[?${MARKER}\\]?\\s*(?:${TIME}\\s*)?(?:[-—:]\\s+)?(.*)$`,
  'u',
);

/** True when the line carries a priority marker where a fact line has one. */
export function isFactLine(line: string): boolean {
  return parseFactLine(line) !== null;
}

/** The fact a line holds, or null when it has no leading priority marker or no text. */
export function parseFactLine(line: string): FactLine | null {
  const match = FACT_LINE.exec(line);
  if (match === null) return null;
  const [, timeBefore, marker, timeAfter, rest] = match;
  const text = rest.trim();
  if (text === '') return null;
  const time = timeBefore ?? timeAfter ?? null;
  return { priority: marker as Priority, time: time === null ? null : normaliseTime(time), text };
}

/** "9:05" → "09:05"; an impossible clock time ("25:61") → null. */
export function normaliseTime(time: string): string | null {
  const [hours, minutes] = time.split(':').map(Number);
  if (!(hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59)) return null;
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`;
}

/** `* 🔴 (09:15) text` (seed 001's line format); the time is left out when unknown. */
export function formatFact(fact: Pick<DistilledFact, 'priority' | 'time' | 'text'>): string {
  return fact.time === null
    ? `* ${fact.priority} ${fact.text}`
    : `* ${fact.priority} (${fact.time}) ${fact.text}`;
}
