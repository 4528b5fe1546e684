/**
 * One session's hook state between hook processes (a small JSON file per session, kept by the
 * command): the counters ids are made from and the recent deliveries that recognise a re-delivered
 * hook (see claude-code-hooks.ts for how the mapping uses them).
 */
import { isRecord } from './json-values';

/** How many recent deliveries a session remembers to recognise a re-delivered hook. */
export const MAX_REMEMBERED_DELIVERIES = 64;

/** One delivery a session remembers: the counter it was given and when. */
export interface RememberedDelivery {
  fingerprint: string;
  counter: number;
  timestamp: number;
}

/**
 * What one session's hooks remember between processes (a small JSON file per session, kept by
 * the command). Counters are the last value given out (0: none yet).
 */
export interface HookSessionState {
  /** Last promptId given (UserPromptSubmit). */
  promptCount: number;
  /** Last stepIndex given (PostToolUse, PostToolUseFailure). */
  stepCount: number;
  /** Lifecycle events published (SessionStart, PreCompact, SessionEnd): their ids' counter. */
  lifecycleCount: number;
  /** When the session started (first SessionStart or first hook seen), epoch ms. */
  startedAt: number | null;
  /** PreToolUse times by tool_use_id, for the matching PostToolUse's durationMs. */
  toolStarts: Record<string, number>;
  /** Recent deliveries, newest last (MAX_REMEMBERED_DELIVERIES). */
  recent: RememberedDelivery[];
}

export function newHookSessionState(): HookSessionState {
  return {
    promptCount: 0,
    stepCount: 0,
    lifecycleCount: 0,
    startedAt: null,
    toolStarts: {},
    recent: [],
  };
}

export function rememberDelivery(state: HookSessionState, delivery: RememberedDelivery): void {
  state.recent.push(delivery);
  if (state.recent.length > MAX_REMEMBERED_DELIVERIES) {
    state.recent.splice(0, state.recent.length - MAX_REMEMBERED_DELIVERIES);
  }
}

export function cloneHookSessionState(state: HookSessionState): HookSessionState {
  return {
    promptCount: state.promptCount,
    stepCount: state.stepCount,
    lifecycleCount: state.lifecycleCount,
    startedAt: state.startedAt,
    toolStarts: { ...state.toolStarts },
    recent: state.recent.map((entry) => ({ ...entry })),
  };
}

/**
 * Two copies of one session's state (the data dir's and a fallback's, kept while the data dir was
 * unusable) as one: the larger of each counter, so no counter-based id is given out twice; the
 * earliest start; both sets of tool starts and recent deliveries.
 */
export function mergeHookSessionStates(a: HookSessionState, b: HookSessionState): HookSessionState {
  const recent = [...a.recent, ...b.recent]
    .filter(
      (entry, i, all) => all.findIndex((other) => other.fingerprint === entry.fingerprint) === i,
    )
    .sort((x, y) => x.timestamp - y.timestamp)
    .slice(-MAX_REMEMBERED_DELIVERIES);
  const starts = [a.startedAt, b.startedAt].filter((at): at is number => at !== null);
  return {
    promptCount: Math.max(a.promptCount, b.promptCount),
    stepCount: Math.max(a.stepCount, b.stepCount),
    lifecycleCount: Math.max(a.lifecycleCount, b.lifecycleCount),
    startedAt: starts.length > 0 ? Math.min(...starts) : null,
    toolStarts: { ...a.toolStarts, ...b.toolStarts },
    recent,
  };
}

/**
 * A state file's content back into a state; anything unreadable starts afresh (a lost counter
 * must not stop the hook: ids stay unique per counter, and the segmenter orders by promptId).
 */
export function parseHookSessionState(text: string | null): HookSessionState {
  if (text === null) return newHookSessionState();
  try {
    const value: unknown = JSON.parse(text);
    if (!isRecord(value)) return newHookSessionState();
    const count = (field: string) =>
      Number.isSafeInteger(value[field]) && (value[field] as number) >= 0
        ? (value[field] as number)
        : 0;
    const toolStarts = isRecord(value.toolStarts)
      ? Object.fromEntries(
          Object.entries(value.toolStarts).filter(([, at]) => typeof at === 'number'),
        )
      : {};
    const recent = Array.isArray(value.recent)
      ? value.recent.filter(
          (entry): entry is RememberedDelivery =>
            isRecord(entry) &&
            typeof entry.fingerprint === 'string' &&
            typeof entry.counter === 'number' &&
            typeof entry.timestamp === 'number',
        )
      : [];
    return {
      promptCount: count('promptCount'),
      stepCount: count('stepCount'),
      lifecycleCount: count('lifecycleCount'),
      startedAt: typeof value.startedAt === 'number' ? value.startedAt : null,
      toolStarts: toolStarts as Record<string, number>,
      recent,
    };
  } catch {
    return newHookSessionState();
  }
}
