// Issue #20 (seed 002 §13): the observer prunes work_unit_outcome memories 90 days after their
// verdict by itself, on Kafka — the timer's final versions and tombstones in its own transaction
// on the real memory topic, as `engram memory prune` writes them, and nothing again on a restart.
import type { Memory, WorkUnitRef } from '@engram/contracts';
import { memoryHistory, observerSettings } from '@engram/core';
import { contractCodec, EventPublisher } from '@engram/kafka';
import { describe, expect, it } from 'vitest';
import {
  ensureObserverTopics,
  observerCodecs,
  prefixedObserverTopics,
} from '../../apps/observer/src/observer.topology';
import {
  edit,
  read,
  sessionCalls,
  sessionEnded,
  T0,
  validationPassed,
  type Scope,
} from '../../apps/observer/src/testing/observer-events';
import {
  readAllCommitted,
  testKafka,
  testRegistry,
  withTestPlatform,
} from './support/kafka-fixtures';
import { startTestObserver, type TestObserver } from './support/observer-service';
import { eventually, uniqueName } from './support/unique';

const DAY = 24 * 3_600_000;
const PARTITIONS = 3;

/** Every record of the memory topic, in log order per memory: versions, and null for tombstones. */
async function recordsByMemory(topic: string, atLeast: number) {
  const registry = testRegistry();
  const codec = contractCodec('memory.memories.v1');
  const byMemory = new Map<string, Array<Memory | null>>();
  for (const message of await readAllCommitted(testKafka(), topic, atLeast)) {
    const key = message.key!.toString('utf8');
    const memory =
      message.value === null
        ? null
        : (codec.fromAvro(await registry.decode(message.value)) as Memory);
    byMemory.set(key, [...(byMemory.get(key) ?? []), memory]);
  }
  return byMemory;
}

describe('the observer’s scheduled work_unit_outcome prune on Kafka (issue #20)', () => {
  it('should tombstone the outcomes 90 days past their verdict, with the pruned version first, once', async () => {
    const run = uniqueName('prune');
    const scope: Scope = { tenantId: 'acme', projectId: `${run}/api` };
    const topics = prefixedObserverTopics(`${run}.`);
    await withTestPlatform((platform) => ensureObserverTopics(platform, topics, PARTITIONS));
    // Two work units, validated a day apart.
    const specs: WorkUnitRef[] = [0, 1].map((i) => ({
      methodology: 'native',
      hierarchy: [`spec_${i}`],
      label: `Spec ${i}`,
    }));
    const calls = specs.map((_, i) =>
      sessionCalls(scope, `${run}-s${i}`, [read('src/a.ts'), edit('src/a.ts')], T0 + i * DAY),
    );
    const lifecycle = specs.flatMap((workUnitRef, i) => [
      { ...validationPassed(scope, `${run}-s${i}`, T0 + i * DAY + 10_000), workUnitRef },
      sessionEnded(scope, `${run}-s${i}`, T0 + i * DAY + 20_000),
    ]);
    const publisher = new EventPublisher(testKafka(), testRegistry());
    const codecs = observerCodecs(topics);
    await publisher.connect();
    try {
      await publisher.publish(codecs.toolCalls, calls.flat());
      await publisher.publish(codecs.lifecycle, lifecycle);
    } finally {
      await publisher.disconnect();
    }

    let now = T0 + 2 * DAY;
    const start = () =>
      startTestObserver({
        settings: observerSettings(),
        topics,
        groupId: `${run}.observer`,
        partitions: PARTITIONS,
        retry: { initialMs: 100, maxMs: 1_000 },
        sweepIntervalMs: 300,
        pruneIntervalMs: 300,
        clock: () => now,
      });
    let observer: TestObserver = await start();
    try {
      await eventually(() => (observer.stage.counters.workUnitOutcomes >= 2 ? true : undefined), {
        timeoutMs: 90_000,
      });
      await eventually(() => (observer.pruning.counters.runs >= 3 ? true : undefined));
      expect(observer.pruning.counters.pruned).toBe(0);
      // 90 days after the first verdict and not yet after the second.
      now = T0 + 90 * DAY + 10_000;
      await eventually(() => (observer.pruning.counters.pruned >= 1 ? true : undefined));
      const runs = observer.pruning.counters.runs;
      await eventually(() => (observer.pruning.counters.runs >= runs + 3 ? true : undefined));
      expect(observer.pruning.counters.pruned).toBe(1);
    } finally {
      await observer.stop();
    }

    const records = await recordsByMemory(topics.memories, 4);
    const outcomes = [...records.values()].filter((versions) =>
      versions.some((v) => v?.memoryType === 'work_unit_outcome'),
    );
    expect(outcomes).toHaveLength(2);
    const pruned = outcomes.find((versions) => versions.at(-1) === null)!;
    const kept = outcomes.find((versions) => versions.at(-1) !== null)!;
    expect(kept.at(-1)?.content).toContain('Spec 1');
    const history = memoryHistory(
      pruned.map((memory, offset) => ({ partition: 0, offset, timestamp: null, memory })),
    );
    expect(history.map((entry) => entry.reasons.at(-1))).toEqual([
      'created (source observer_inferred)',
      'pruned (older-than-90d)',
      'deleted after pruning (older-than-90d)',
    ]);
    expect(pruned[1]).toMatchObject({ staleAt: now, timestamp: now });
    // Per memory id: records of different partitions arrive in no fixed order.
    const versionsPerMemory = (byMemory: Map<string, unknown[]>) =>
      Object.fromEntries([...byMemory].map(([id, versions]) => [id, versions.length]));
    const ends = versionsPerMemory(records);

    // Started again on the same log, the clock unchanged: nothing more to prune, nothing written.
    observer = await start();
    try {
      await eventually(() => (observer.pruning.counters.runs >= 3 ? true : undefined), {
        timeoutMs: 90_000,
      });
      expect(observer.pruning.counters.pruned).toBe(0);
    } finally {
      await observer.stop();
    }
    const again = await recordsByMemory(topics.memories, 4);
    expect(versionsPerMemory(again)).toEqual(ends);
  }, 180_000);
});
