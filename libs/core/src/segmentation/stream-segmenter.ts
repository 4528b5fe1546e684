import type { SegmenterSettings } from './segmenter-settings';
import {
  closeIdle,
  endSession,
  isIdleForever,
  segmentPrompt,
  type ParentFinder,
  type PromptDecision,
  type SegmenterOutput,
  type SegmenterPrompt,
  type SessionState,
  type StepContext,
} from './session-segmenter';

export interface StreamSegmenterOptions {
  settings: SegmenterSettings;
  findParent?: ParentFinder;
  /** Sweep idle sessions after this many prompts (bounds memory on long inputs). */
  sweepEvery?: number;
}

export interface PushResult {
  decision: PromptDecision;
  outputs: SegmenterOutput[];
}

/**
 * Many sessions at once: the per-session state machine plus the bookkeeping both the offline
 * `engram segment` and the Kafka service need — a clock (the latest event time), a periodic sweep
 * that closes idle threads and forgets sessions that can no longer change (so memory holds only
 * open state), and the set of sessions changed since the last `takeChanges()` (the changelog).
 */
export class StreamSegmenter {
  private readonly sessions = new Map<string, SessionState>();
  /** Changed since the last takeChanges(): the new state, or null when the session was dropped. */
  private readonly changed = new Map<string, SessionState | null>();
  private clock = 0;
  private sinceSweep = 0;

  /** The step context of a prompt without an embedding (one object, not one per prompt). */
  private readonly keywordContext: StepContext;

  constructor(private readonly options: StreamSegmenterOptions) {
    this.keywordContext = {
      settings: options.settings,
      embedding: null,
      findParent: options.findParent,
    };
  }

  get openSessions(): number {
    return this.sessions.size;
  }

  get now(): number {
    return this.clock;
  }

  /** Segments one prompt. Throws InvalidEventError (state untouched) for a prompt it cannot place. */
  push(prompt: SegmenterPrompt, embedding: readonly number[] | null = null): PushResult {
    const existing = this.sessions.get(prompt.sessionId);
    const result = segmentPrompt(
      existing,
      prompt,
      embedding === null ? this.keywordContext : { ...this.keywordContext, embedding },
    );
    if (result.decision.rule !== 'duplicate') {
      // States are updated in place: only a new session needs a new entry.
      if (result.state !== existing) this.sessions.set(result.state.sessionId, result.state);
      this.changed.set(result.state.sessionId, result.state);
    }
    this.clock = Math.max(this.clock, prompt.timestamp);
    this.sinceSweep += 1;
    if (this.sinceSweep < (this.options.sweepEvery ?? 10_000)) return result;
    return { decision: result.decision, outputs: [...result.outputs, ...this.sweep()] };
  }

  /** SessionEnded: closes the session's episode and forgets the session. */
  end(sessionId: string, at: number): SegmenterOutput[] {
    const state = this.sessions.get(sessionId);
    if (!state) return [];
    const { outputs } = endSession(state, at);
    this.drop(sessionId);
    return outputs;
  }

  /**
   * Closes idle threads and over-long episodes as of `now` (default: the latest event time) and
   * drops sessions with nothing left open.
   */
  sweep(now: number = this.clock): SegmenterOutput[] {
    this.sinceSweep = 0;
    const outputs: SegmenterOutput[] = [];
    for (const [sessionId, state] of this.sessions) {
      const result = closeIdle(state, now, this.options.settings);
      if (result.outputs.length > 0) {
        outputs.push(...result.outputs);
        this.put(result.state);
      }
      if (isIdleForever(result.state, now, this.options.settings)) this.drop(sessionId);
    }
    return outputs;
  }

  state(sessionId: string): SessionState | undefined {
    return this.sessions.get(sessionId);
  }

  /** Puts back a state read from the changelog (on partition assignment). */
  restore(state: SessionState): void {
    this.sessions.set(state.sessionId, state);
    this.clock = Math.max(this.clock, state.clock);
  }

  /** Forgets a session without a changelog entry (its partition moved to another instance). */
  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
    this.changed.delete(sessionId);
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** The sessions changed since the last call: state to write, or null for a tombstone. */
  takeChanges(): Map<string, SessionState | null> {
    const changes = new Map(this.changed);
    this.changed.clear();
    return changes;
  }

  private put(state: SessionState): void {
    this.sessions.set(state.sessionId, state);
    this.changed.set(state.sessionId, state);
  }

  private drop(sessionId: string): void {
    this.sessions.delete(sessionId);
    this.changed.set(sessionId, null);
  }
}
