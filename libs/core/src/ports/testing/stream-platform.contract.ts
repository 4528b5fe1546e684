// The StreamPlatform contract: one suite, run against both adapters (the embedded SQLite log in
// the unit tier, Kafka + Schema Registry in the integration tier), so a service topology written
// once behaves the same in both modes. Test support only (not exported from the package index).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MisconfigurationError } from '../../errors/engram-error';
import { bindStage, runTopology, type ServiceTopology } from '../service-topology';
import type { StreamPlatform, TailSkip, TopicTail } from '../stream-platform';
import type { Delivered, DeliveredOrTombstone } from '../stream-stage';
import { contractTestCodec, type ContractEvent } from './event-log.contract';

export interface StreamPlatformFixture {
  platform: StreamPlatform;
  /** A topic or group name no other test (or earlier run) uses. */
  uniqueName(prefix: string): string;
  close(): Promise<void>;
}

const RETRY = { initialMs: 50, maxMs: 1_000 };

function events(count: number, from = 0): ContractEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    eventId: `event-${from + i}`,
    sessionId: `session-${(from + i) % 5}`,
    seq: from + i,
    text: `text ${from + i}`,
    tags: [],
    note: null,
  }));
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function describeStreamPlatformContract(
  adapter: string,
  open: () => Promise<StreamPlatformFixture>,
): void {
  describe(`StreamPlatform contract: ${adapter}`, () => {
    let fixture: StreamPlatformFixture;
    const platform = () => fixture.platform;

    beforeAll(async () => {
      fixture = await open();
    });

    afterAll(async () => {
      await fixture?.close();
    });

    it('should create topics idempotently, keep an existing count and name mismatched counts', async () => {
      const three = fixture.uniqueName('contract-three');
      const two = fixture.uniqueName('contract-two');
      await platform().ensureTopics([{ topic: three }], 3);
      await platform().ensureTopics([{ topic: three }, { topic: two, compacted: true }], 2);
      expect(await platform().partitionCount([three])).toBe(3);
      expect(await platform().partitionCount([two])).toBe(2);
      const mismatch = platform().partitionCount([three, two]);
      await expect(mismatch).rejects.toThrow(MisconfigurationError);
      await expect(platform().partitionCount([three, two])).rejects.toThrow(`${three}: 3`);
      await expect(platform().partitionCount([three, two])).rejects.toThrow(`${two}: 2`);
    });

    it('should run a topology exactly once: outputs, changelog, offsets, assignment and timer', async () => {
      const input = contractTestCodec(fixture.uniqueName('contract-in'));
      const output = contractTestCodec(fixture.uniqueName('contract-out'));
      const changelog = fixture.uniqueName('contract-changelog');
      const groupId = fixture.uniqueName('contract-group');
      const assigned: number[][] = [];
      let sweeps = 0;
      const topology: ServiceTopology = {
        service: 'contract',
        groupId,
        topics: {
          inputs: [{ topic: input.topic }],
          own: [
            { topic: output.topic },
            { topic: changelog, compacted: true, withDeadLetter: false },
          ],
        },
        bindings: [
          bindStage(input, {
            transform: (items) => [
              {
                codec: output,
                events: items.map(({ event }) => ({ ...event, text: event.text.toUpperCase() })),
              },
              {
                topic: changelog,
                messages: items.map(({ event }) => ({
                  key: event.sessionId,
                  value: JSON.stringify({ last: event.seq }),
                })),
              },
            ],
          }),
        ],
        assignments: [{ topic: input.topic, assign: (owned) => assigned.push(owned) }],
        timers: [
          {
            name: 'contract',
            stage: {
              sweep: () => Promise.resolve([]),
              committed: () => (sweeps += 1),
              aborted: () => undefined,
            },
            intervalMs: 50,
          },
        ],
        waitOn: [input.topic],
        internal: [],
      };
      const running = await runTopology(
        platform(),
        topology,
        { partitions: 3, retry: RETRY },
        () => undefined,
      );
      try {
        expect(running.partitions).toBe(3);
        expect(running.inputs).toEqual([input.topic]);
        const log = await platform().eventLog();
        const published = events(20);
        await log.publish(input, published);
        const partitions = [0, 1, 2];
        const ends = await Promise.all(partitions.map((p) => platform().endOffset(input.topic, p)));
        expect(ends.reduce((a, b) => a + b, 0)).toBe(20);
        // Every input offset is committed, with its outputs.
        await until(async () => {
          const committed = await platform().committedOffsets(groupId, input.topic, partitions);
          return partitions.every((p) => committed.get(p) === ends[p]) ? true : undefined;
        });
        const copied = (
          await Promise.all(partitions.map((p) => log.read(output, p, 0, 100)))
        ).flat();
        expect(copied.map((r) => r.event.text).sort()).toEqual(
          published.map((e) => e.text.toUpperCase()).sort(),
        );
        // The changelog keeps the latest value per key: the last event of each session.
        const latest = await platform().readChangelog(changelog, partitions);
        expect(new Map([...latest].map(([key, value]) => [key, value.toString('utf8')]))).toEqual(
          new Map([0, 1, 2, 3, 4].map((s) => [`session-${s}`, JSON.stringify({ last: 15 + s })])),
        );
        expect(running.processor.counters.processed).toBe(20);
        expect(running.processor.counters.transactions).toBeGreaterThan(0);
        // One member owns every partition of the input (this process is the only one).
        expect(assigned.at(-1)?.slice().sort()).toEqual(partitions);
        await until(() => Promise.resolve(sweeps > 0 ? true : undefined));
      } finally {
        await running.stop();
      }
      // Restarted from its committed offsets, it processes only what came since: nothing twice.
      const again = await runTopology(
        platform(),
        topology,
        { partitions: 3, retry: RETRY },
        () => undefined,
      );
      try {
        const log = await platform().eventLog();
        await log.publish(input, events(5, 20));
        const partitions = [0, 1, 2];
        const ends = await log.endOffsets(input.topic);
        await until(async () => {
          const committed = await platform().committedOffsets(groupId, input.topic, partitions);
          return partitions.every((p) => committed.get(p) === ends[p]) ? true : undefined;
        });
        expect(again.processor.counters.processed).toBe(5);
        // (Kafka's end offsets count transaction markers too: read the records instead.)
        const copied = await Promise.all(partitions.map((p) => log.read(output, p, 0, 100)));
        expect(copied.flat()).toHaveLength(25);
      } finally {
        await again.stop();
      }
    });

    it('should hand a sink consumer events and tombstones, and commit after the handler', async () => {
      const codec = contractTestCodec(fixture.uniqueName('contract-sink'));
      const groupId = fixture.uniqueName('contract-sink-group');
      await platform().ensureTopics([{ topic: codec.topic, compacted: true }], 2);
      const log = await platform().eventLog();
      await log.publish(codec, events(6));
      await log.publishTombstones(codec.topic, ['session-1']);
      const seen: DeliveredOrTombstone<ContractEvent>[] = [];
      const consumer = await platform().createSinkConsumer({
        groupId,
        service: 'contract',
        retry: RETRY,
      });
      consumer.subscribe(
        codec,
        (items) => {
          seen.push(...items);
          return Promise.resolve();
        },
        { tombstones: true },
      );
      await consumer.start();
      try {
        await until(() => Promise.resolve(seen.length >= 7 ? true : undefined));
        expect(seen.filter((item) => item.event === null).map((item) => item.key)).toEqual([
          'session-1',
        ]);
        expect(seen.flatMap((item) => (item.event ? [item.event.eventId] : [])).sort()).toEqual(
          events(6)
            .map((e) => e.eventId)
            .sort(),
        );
        const ends = await log.endOffsets(codec.topic);
        await until(async () => {
          const committed = await platform().committedOffsets(groupId, codec.topic, [0, 1]);
          return committed.get(0) === ends[0] && committed.get(1) === ends[1] ? true : undefined;
        });
      } finally {
        await consumer.stop();
      }
    });

    it('should tail every partition from a timestamp with no group, passing over what it cannot decode', async () => {
      const codec = contractTestCodec(fixture.uniqueName('contract-tail'));
      // The same schema without the semantic check: how a record the tail refuses gets written.
      const lax = { ...codec, validate: () => [] };
      await platform().ensureTopics([{ topic: codec.topic }], 2);
      const log = await platform().eventLog();
      await log.publish(codec, events(4));
      await pause(20);
      const from = Date.now();
      await pause(20);
      await log.publish(codec, events(4, 4));
      await log.publish(lax, [{ ...events(1, 99)[0], eventId: '' }]);
      // Two tails from the same time: each reads everything (no group shares the records).
      const readers = [0, 1].map(() => ({
        seen: [] as Delivered<ContractEvent>[],
        skipped: [] as TailSkip[],
      }));
      const tails: TopicTail[] = [];
      for (const reader of readers) {
        const tail = await platform().createTail({
          codec,
          fromTimestamp: from,
          handle: (items) => {
            reader.seen.push(...items);
            return Promise.resolve();
          },
          onSkipped: (skipped) => reader.skipped.push(skipped),
        });
        await tail.start();
        tails.push(tail);
      }
      try {
        await log.publish(codec, events(2, 8));
        for (const reader of readers) {
          await until(() => Promise.resolve(reader.seen.length >= 6 ? true : undefined));
          await until(() => Promise.resolve(reader.skipped.length >= 1 ? true : undefined));
          expect(reader.seen.map((item) => item.event.seq).sort((a, b) => a - b)).toEqual([
            4, 5, 6, 7, 8, 9,
          ]);
          expect(reader.skipped).toHaveLength(1);
          expect(reader.skipped[0].topic).toBe(codec.topic);
          // Each partition in offset order.
          for (const partition of [0, 1]) {
            const offsets = reader.seen
              .filter((item) => item.partition === partition)
              .map((item) => Number(item.offset));
            expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
          }
        }
        expect(tails.map((tail) => tail.counters)).toEqual([
          { handled: 6, skipped: 1 },
          { handled: 6, skipped: 1 },
        ]);
      } finally {
        for (const tail of tails) await tail.stop();
      }
    });
  });
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
