import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyStageOutput, ExactlyOnceStage } from '../ports/stream-stage';
import { startSweepTimer, type TransactionalProducer } from './sweep-timer';

/** A processor whose transactions take `ms` and fail while `failing` is set. */
function processor(ms: number) {
  const state = { running: 0, maxRunning: 0, transactions: 0, failing: false };
  const producer: TransactionalProducer = {
    async produceTransactionally(
      outputs: () => AnyStageOutput[] | Promise<AnyStageOutput[]>,
      hooks: Pick<ExactlyOnceStage<unknown>, 'onCommitted' | 'onAborted'> = {},
    ) {
      state.running += 1;
      state.maxRunning = Math.max(state.maxRunning, state.running);
      await outputs();
      await new Promise((resolve) => setTimeout(resolve, ms));
      state.running -= 1;
      state.transactions += 1;
      if (state.failing) {
        hooks.onAborted?.();
        throw new Error('broker down');
      }
      hooks.onCommitted?.();
    },
  };
  return { producer, state };
}

describe('startSweepTimer', () => {
  afterEach(() => vi.useRealTimers());

  it('should run one sweep at a time, commit or roll back, and wait for the one in flight', async () => {
    vi.useFakeTimers();
    const { producer, state } = processor(250);
    const stage = { sweep: vi.fn(() => Promise.resolve([])), committed: vi.fn(), aborted: vi.fn() };
    const failures: unknown[] = [];
    const timer = startSweepTimer(producer, stage, 100, (error) => failures.push(error));

    await vi.advanceTimersByTimeAsync(1_000);
    expect(state.maxRunning).toBe(1);
    expect(stage.committed).toHaveBeenCalledTimes(state.transactions);

    state.failing = true;
    await vi.advanceTimersByTimeAsync(400);
    expect(stage.aborted).toHaveBeenCalled();
    expect(failures.length).toBeGreaterThan(0);

    await vi.advanceTimersByTimeAsync(50);
    const stopped = timer.stop();
    await vi.advanceTimersByTimeAsync(300);
    await stopped;
    const after = stage.sweep.mock.calls.length;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stage.sweep.mock.calls.length).toBe(after);
    expect(state.running).toBe(0);
  });
});
