import { describe, expect, it } from 'vitest';
import { observerSettings } from './observer-settings';
import { endedSessionExpired, newSeenEvents, SeenEvents } from './seen-events';

const event = (n: number) => ({ eventId: `e${n}`, timestamp: 1_000 + n });

describe('SeenEvents', () => {
  it('should know an event by its id, exactly, and write what it learns to its state', () => {
    const state = newSeenEvents();
    const seen = SeenEvents.of(state, observerSettings());
    seen.add(event(1));
    seen.add(event(2));
    seen.add(event(1));
    expect(seen.has(event(1))).toBe(true);
    // Same time, another id: a new event (a resumed session's, or one published late).
    expect(seen.has({ eventId: 'other', timestamp: event(1).timestamp })).toBe(false);
    expect(state).toEqual({ ids: ['e1', 'e2'], times: [1_001, 1_002], droppedThrough: null });
    // A restored copy knows the same.
    expect(SeenEvents.of(structuredClone(state), observerSettings()).has(event(2))).toBe(true);
  });

  it('should keep at most maxSessionEventIds, an unknown event up to the newest dropped one counting as seen', () => {
    const state = newSeenEvents();
    const seen = SeenEvents.of(state, observerSettings({ maxSessionEventIds: 3 }));
    for (const n of [1, 2, 3, 4, 5]) seen.add(event(n));
    expect(state.ids).toEqual(['e3', 'e4', 'e5']);
    expect(state.droppedThrough).toBe(1_002);
    expect(seen.size).toBe(3);
    expect(seen.has(event(1))).toBe(true);
    expect(seen.has({ eventId: 'unknown', timestamp: 1_002 })).toBe(true);
    expect(seen.has({ eventId: 'unknown', timestamp: 1_003 })).toBe(false);
  });

  it("should append a resumed run's events after the first run's, within the bound", () => {
    const first = newSeenEvents();
    SeenEvents.of(first, observerSettings()).add(event(1));
    const second = newSeenEvents();
    const run = SeenEvents.of(second, observerSettings());
    for (const n of [2, 3]) run.add(event(n));
    const merged = SeenEvents.of(first, observerSettings({ maxSessionEventIds: 2 }));
    merged.addAll(second);
    expect(first.ids).toEqual(['e2', 'e3']);
    expect(first.droppedThrough).toBe(1_001);
  });

  it('should let an ended session go after endedSessionRetentionMs of stream time', () => {
    const settings = observerSettings({ endedSessionRetentionMs: 100 });
    expect(endedSessionExpired(1_000, 1_099, settings)).toBe(false);
    expect(endedSessionExpired(1_000, 1_100, settings)).toBe(true);
    expect(() => observerSettings({ maxSessionEventIds: 0 })).toThrow(/maxSessionEventIds/);
    expect(() => observerSettings({ endedSessionRetentionMs: -1 })).toThrow(/endedSession/);
  });
});
