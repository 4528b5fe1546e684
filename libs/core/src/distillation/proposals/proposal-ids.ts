import type { EpochMillis } from '@engram/contracts';
import { compactDay } from '../time';

const PROPOSAL_ID = /^p-(\d{8})-(\d{3,})$/;

/** `p-YYYYMMDD-NNN` (at least three digits; the sequence is per UTC day, from 1). */
export function proposalId(day: EpochMillis, sequence: number): string {
  if (!Number.isInteger(sequence) || sequence < 1) {
    throw new RangeError(`proposal sequence must be a positive integer, got ${sequence}`);
  }
  return `p-${compactDay(day)}-${String(sequence).padStart(3, '0')}`;
}

/** The day (`YYYYMMDD`) and sequence of a proposal id, or null when it is not one. */
export function parseProposalId(id: string): { day: string; sequence: number } | null {
  const match = PROPOSAL_ID.exec(id);
  return match === null ? null : { day: match[1], sequence: Number(match[2]) };
}

/**
 * `count` fresh ids for the UTC day of `now`, continuing after the highest sequence of that day
 * among `existingIds` (ids of other days, and other kinds such as `f-…`, are ignored).
 */
export function nextProposalIds(
  now: EpochMillis,
  existingIds: Iterable<string>,
  count: number,
): string[] {
  const day = compactDay(now);
  let highest = 0;
  for (const id of existingIds) {
    const parsed = parseProposalId(id);
    if (parsed !== null && parsed.day === day) highest = Math.max(highest, parsed.sequence);
  }
  return Array.from({ length: count }, (_, index) => proposalId(now, highest + index + 1));
}
