import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { canonicalVersions, windowOrderKey } from './memory-versions';

const memory = (memoryId: string, eventId: string) => ({ memoryId, eventId }) as Memory;

const episodeClose = windowOrderKey({
  triggerAt: 1_000,
  trigger: 'EpisodeClosed',
  triggerEventId: 'e-close',
});
const sessionEnd = windowOrderKey({
  triggerAt: 1_000,
  trigger: 'SessionEnded',
  triggerEventId: 'e-end',
});
const earlier = windowOrderKey({ triggerAt: 999, trigger: 'SessionEnded', triggerEventId: 'z' });

describe('canonicalVersions', () => {
  it('should keep the canonically latest version whichever window comes first', () => {
    const fromClose = [memory('m-1', 'close-version'), memory('m-2', 'close-only')];
    const fromEnd = [memory('m-1', 'end-version')];
    const finalOf = (order: Array<[string, Memory[]]>) => {
      const written: Record<string, string> = {};
      const log = order.flatMap(([key, memories]) => canonicalVersions(written, key, memories));
      return new Map(log.map((m) => [m.memoryId, m.eventId]));
    };
    const closeFirst = finalOf([
      [episodeClose, fromClose],
      [sessionEnd, fromEnd],
    ]);
    const endFirst = finalOf([
      [sessionEnd, fromEnd],
      [episodeClose, fromClose],
    ]);
    expect(closeFirst).toEqual(endFirst);
    expect(closeFirst.get('m-1')).toBe('close-version');
    expect(closeFirst.get('m-2')).toBe('close-only');
  });

  it('should order by event time before trigger kind, and rewrite the same window again', () => {
    expect(earlier < episodeClose).toBe(true);
    expect(sessionEnd < episodeClose).toBe(true);
    const written: Record<string, string> = {};
    expect(canonicalVersions(written, episodeClose, [memory('m', 'a')])).toHaveLength(1);
    expect(canonicalVersions(written, episodeClose, [memory('m', 'a')])).toHaveLength(1);
    expect(canonicalVersions(written, earlier, [memory('m', 'b')])).toHaveLength(0);
  });
});
