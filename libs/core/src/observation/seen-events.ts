import type { ObserverSettings } from './observer-settings';

/**
 * The events of one session the observer has applied (tool calls and lifecycle events), as plain
 * JSON for the changelog: kept while the session runs and, once it ended, for
 * `endedSessionRetentionMs` of stream time, so that its events published again (the Claude Code
 * hook's spool re-sending an unacknowledged batch, a re-import) are recognised as duplicates
 * (SPEC §11), while new events of the same session id (`--resume`) are not.
 *
 * Exact: an event is known by its id, no probabilistic filter. Bounded: at most
 * `maxSessionEventIds` ids, the oldest dropped first; an unknown event no later than the newest
 * dropped one counts as seen (it can no longer be told apart, and counting it twice is the worse
 * error). Deterministic: it depends on the events only.
 */
export interface SeenEventsState {
  /** Event ids in the order they were applied, oldest first. */
  ids: string[];
  /** Their event times (epoch ms), index for index. */
  times: number[];
  /** The latest event time among the ids dropped for the bound; null while none was. */
  droppedThrough: number | null;
}

export interface SeenEvent {
  eventId: string;
  timestamp: number;
}

export function newSeenEvents(): SeenEventsState {
  return { ids: [], times: [], droppedThrough: null };
}

/** A SeenEventsState with an index for membership; changes go to the state it was given. */
export class SeenEvents {
  private readonly index: Set<string>;

  private constructor(
    private readonly state: SeenEventsState,
    private readonly max: number,
  ) {
    this.index = new Set(state.ids);
  }

  /** Wraps (and from then on changes) `state`. */
  static of(state: SeenEventsState, settings: Pick<ObserverSettings, 'maxSessionEventIds'>) {
    return new SeenEvents(state, settings.maxSessionEventIds);
  }

  get size(): number {
    return this.state.ids.length;
  }

  has(event: SeenEvent): boolean {
    if (this.index.has(event.eventId)) return true;
    return this.state.droppedThrough !== null && event.timestamp <= this.state.droppedThrough;
  }

  /** Remembers the event unless it counts as seen, dropping the oldest ids beyond the bound. */
  add(event: SeenEvent): void {
    if (this.has(event)) return;
    this.index.add(event.eventId);
    this.state.ids.push(event.eventId);
    this.state.times.push(event.timestamp);
    const excess = this.state.ids.length - this.max;
    if (excess <= 0) return;
    for (const id of this.state.ids.splice(0, excess)) this.index.delete(id);
    const newestDropped = Math.max(...this.state.times.splice(0, excess));
    this.state.droppedThrough = Math.max(this.state.droppedThrough ?? newestDropped, newestDropped);
  }

  /** Appends another state's events after these (a resumed session's run, as it ends too). */
  addAll(other: SeenEventsState): void {
    if (other.droppedThrough !== null) {
      this.state.droppedThrough = Math.max(
        this.state.droppedThrough ?? other.droppedThrough,
        other.droppedThrough,
      );
    }
    other.ids.forEach((eventId, i) => this.add({ eventId, timestamp: other.times[i] }));
  }
}

/**
 * Whether an ended session's record has served its time: `endedSessionRetentionMs` of stream time
 * (the latest event time the observer has seen) after the session's last activity.
 */
export function endedSessionExpired(
  lastActivityAt: number,
  streamTime: number,
  settings: Pick<ObserverSettings, 'endedSessionRetentionMs'>,
): boolean {
  return streamTime - lastActivityAt >= settings.endedSessionRetentionMs;
}
