import type { DetectorState } from './detector-state';
import { signalBase, signalIdOf, type CallContext } from './observed-call';
import type { CoAccessSignal } from './signals';

/** The unordered key of a file pair. */
export function pairKeyOf(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}

/**
 * co_access: each file read or edited now, with every other file read or edited within the
 * window (`coAccessWindowSteps`) before it — its latest touch, so the smallest delta. Files of
 * the same step pair up as `same_step`. Steps are the session's `stepIndex`: a late call whose
 * step is older than the window pairs with nothing rather than with the present.
 */
export function detectCoAccess(
  state: DetectorState,
  context: CallContext,
  touched: readonly string[],
): CoAccessSignal[] {
  const { stepIndex: step, timestamp: at, eventId } = context.call;
  const window = context.settings.coAccessWindowSteps;
  const signals: CoAccessSignal[] = [];
  for (const fileB of touched) {
    for (const earlier of latestTouchesBefore(state, fileB, step, window)) {
      const key = pairKeyOf(earlier.file, fileB);
      const firstInSession = state.coAccessPairs[key] === undefined;
      state.coAccessPairs[key] = true;
      const stepDelta = step - earlier.step;
      signals.push({
        ...signalBase(
          context,
          signalIdOf(context, 'co_access', earlier.file, fileB),
          unique([earlier.eventId, eventId]),
        ),
        type: 'co_access',
        fileA: earlier.file,
        fileB,
        stepDelta,
        timeDeltaMs: Math.max(0, at - earlier.at),
        direction: stepDelta === 0 ? 'same_step' : 'a_then_b',
        firstInSession,
      });
    }
    state.recentTouches.push({ file: fileB, step, at, eventId });
  }
  state.recentTouches = state.recentTouches.filter((touch) => state.maxStep - touch.step <= window);
  return signals;
}

function latestTouchesBefore(
  state: DetectorState,
  file: string,
  step: number,
  window: number,
): DetectorState['recentTouches'] {
  const latest = new Map<string, DetectorState['recentTouches'][number]>();
  for (const touch of state.recentTouches) {
    if (touch.file === file || touch.step > step || step - touch.step > window) continue;
    const seen = latest.get(touch.file);
    if (seen === undefined || touch.step >= seen.step) latest.set(touch.file, touch);
  }
  return [...latest.values()].sort((a, b) => a.step - b.step || (a.file < b.file ? -1 : 1));
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
