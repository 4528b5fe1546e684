// A session stage over an in-memory changelog, for the observer's unit tests (test support only).
import { DownstreamUnavailableError, observerSettings, type ObserverSettings } from '@engram/core';
import type { AnyStageOutput, Delivered, RawStageOutput } from '@engram/core';
import type { ObserverGraphBatch, ObserverGraphWriter } from '@engram/core';
import { DEFAULT_OBSERVER_TOPICS, ObserverStage, type ToolCallPositions } from '../observer.stage';

export class FakeWriter implements ObserverGraphWriter {
  readonly batches: ObserverGraphBatch[] = [];
  failures = 0;

  write(batch: ObserverGraphBatch): Promise<void> {
    if (this.failures > 0) {
      this.failures -= 1;
      return Promise.reject(new DownstreamUnavailableError('neo4j: connection refused'));
    }
    this.batches.push(structuredClone(batch));
    return Promise.resolve();
  }
}

/** A stage whose changelog is a map the test commits to, as Kafka would on commit. */
export function harness(
  log = new Map<string, Buffer>(),
  positions: Partial<ToolCallPositions> = {},
  sessionIdleMs?: number,
  settings: Partial<ObserverSettings> = {},
) {
  const writer = new FakeWriter();
  let restores = 0;
  const stage = new ObserverStage(DEFAULT_OBSERVER_TOPICS, {
    settings: observerSettings(settings),
    restore: () => {
      restores += 1;
      return Promise.resolve(new Map(log));
    },
    writer,
    positions: {
      endOffset: () => Promise.resolve(0),
      committedOffsets: (partitions) => Promise.resolve(new Map(partitions.map((p) => [p, 0]))),
      ...positions,
    },
    redact: (text) => text.replace(/sk-[a-z0-9]+/g, '[REDACTED]'),
    ...(sessionIdleMs !== undefined && { sessionIdleMs }),
  });
  const commit = (outputs: AnyStageOutput[]) => {
    for (const message of changelogOf(outputs).messages) {
      const key = String(message.key);
      if (message.value === null) log.delete(key);
      else log.set(key, message.value as Buffer);
    }
    stage.committed();
  };
  return { stage, writer, log, commit, restores: () => restores };
}

export const changelogOf = (outputs: AnyStageOutput[]) => outputs[0] as RawStageOutput;

export function delivered<E>(events: E[], firstOffset = 0, partition = 0): Delivered<E>[] {
  return events.map((event, i) => ({
    event,
    topic: 'in',
    partition,
    offset: String(firstOffset + i),
    key: null,
    headers: {},
  }));
}
