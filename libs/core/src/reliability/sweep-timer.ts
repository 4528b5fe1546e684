import type { AnyStageOutput, ExactlyOnceStage } from '../ports/stream-stage';

/** A processor that commits a timer's outputs in a transaction of their own (Kafka or SQLite). */
export interface TransactionalProducer {
  produceTransactionally(
    outputs: () => AnyStageOutput[] | Promise<AnyStageOutput[]>,
    hooks?: Pick<ExactlyOnceStage<unknown>, 'onCommitted' | 'onAborted'>,
  ): Promise<void>;
}

/** A stage with timer work: idle sessions to close, waiting events to apply. */
export interface SweepingStage {
  sweep(): Promise<AnyStageOutput[]>;
  committed(): void;
  /** The state in memory went ahead of the log: roll it back to the last commit. */
  aborted(): void;
}

export interface SweepTimer {
  /** Stops the timer and waits for a sweep in flight. */
  stop(): Promise<void>;
}

/**
 * Runs `stage.sweep()` every `intervalMs` in a transaction of its own, one at a time (a slow
 * sweep is never overlapped by the next). A failed sweep is reported and simply runs again at
 * the next tick: it changed nothing, because its transaction aborted.
 */
export function startSweepTimer(
  processor: TransactionalProducer,
  stage: SweepingStage,
  intervalMs: number,
  onFailure: (error: unknown) => void,
): SweepTimer {
  let sweeping: Promise<void> | null = null;
  const timer = setInterval(() => {
    sweeping ??= processor
      .produceTransactionally(() => stage.sweep(), {
        onCommitted: () => stage.committed(),
        onAborted: () => stage.aborted(),
      })
      .catch(onFailure)
      .finally(() => (sweeping = null));
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
