// The EventLogPort contract: one suite, run against every adapter (the embedded SQLite log in the
// unit tier, Kafka + Schema Registry in the integration tier). Test support only (not exported
// from the package index).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidEventError, MisconfigurationError } from '../../errors/engram-error';
import type { EventLogPort } from '../event-log.port';
import { partitionOfKey } from '../partitioning';
import type { TopicCodec } from '../stream-stage';

export interface EventLogFixture {
  log: EventLogPort;
  /** A topic name no other test (or earlier run) uses. */
  topicName(prefix: string): string;
  close(): Promise<void>;
}

export interface ContractEvent {
  eventId: string;
  sessionId: string;
  seq: number;
  text: string;
  tags: string[];
  note: string | null;
}

const CONTRACT_SCHEMA = {
  type: 'record',
  name: 'ContractEvent',
  namespace: 'engram.test',
  fields: [
    { name: 'eventId', type: 'string' },
    { name: 'sessionId', type: 'string' },
    { name: 'seq', type: 'long' },
    { name: 'text', type: 'string' },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

export function contractTestCodec(topic: string): TopicCodec<ContractEvent> {
  return {
    topic,
    subject: `${topic}-value`,
    schema: CONTRACT_SCHEMA,
    toAvro: (event) => event,
    fromAvro: (value) => value as ContractEvent,
    key: (event) => event.sessionId,
    validate: (event) => (event.eventId.trim() === '' ? ['eventId must not be empty'] : []),
  };
}

function events(count: number, sessions: number, from = 0): ContractEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    eventId: `event-${from + i}`,
    sessionId: `session-${(from + i) % sessions}`,
    seq: 2 ** 40 + from + i,
    text: `text ${from + i} — ünïcødé`,
    tags: i % 2 === 0 ? ['a', 'b'] : [],
    note: i % 3 === 0 ? null : `note ${i}`,
  }));
}

export function describeEventLogContract(
  adapter: string,
  open: () => Promise<EventLogFixture>,
): void {
  describe(`EventLogPort contract: ${adapter}`, () => {
    let fixture: EventLogFixture;
    const log = () => fixture.log;

    beforeAll(async () => {
      fixture = await open();
    });

    afterAll(async () => {
      await fixture?.close();
    });

    it('should create a topic idempotently and refuse a different partition count', async () => {
      const topic = fixture.topicName('contract-topic');
      await log().ensureTopic({ topic, partitions: 3 });
      await log().ensureTopic({ topic, partitions: 3 });
      expect(await log().endOffsets(topic)).toEqual([0, 0, 0]);
      await expect(log().ensureTopic({ topic, partitions: 4 })).rejects.toThrow(
        MisconfigurationError,
      );
      expect(await log().endOffsets(topic)).toEqual([0, 0, 0]);
    });

    it('should give each partition dense offsets from 0, in publish order, keyed by the Kafka partitioner', async () => {
      const codec = contractTestCodec(fixture.topicName('contract-order'));
      await log().ensureTopic({ topic: codec.topic, partitions: 3 });
      const published = events(30, 5);
      await log().publish(codec, published.slice(0, 12));
      await log().publish(codec, published.slice(12));

      const ends = await log().endOffsets(codec.topic);
      for (let partition = 0; partition < 3; partition++) {
        const expected = published.filter((e) => partitionOfKey(e.sessionId, 3) === partition);
        expect(ends[partition]).toBe(expected.length);
        const read = await log().read(codec, partition, 0, 100);
        expect(read.map((r) => r.offset)).toEqual(expected.map((_, i) => i));
        expect(read.map((r) => r.event)).toEqual(expected);
        expect(read.every((r) => r.partition === partition && r.topic === codec.topic)).toBe(true);
        expect(read.map((r) => r.key)).toEqual(expected.map((e) => e.sessionId));
      }
    });

    it('should put every event on the given partition when one is named', async () => {
      const codec = contractTestCodec(fixture.topicName('contract-pinned'));
      await log().ensureTopic({ topic: codec.topic, partitions: 3 });
      const published = events(4, 4);
      await log().publish(codec, published, { partition: 2 });
      expect(await log().endOffsets(codec.topic)).toEqual([0, 0, 4]);
      const read = await log().read(codec, 2, 0, 10);
      expect(read.map((r) => r.event.eventId)).toEqual(published.map((e) => e.eventId));
    });

    it('should read from any offset, at most maxRecords, and nothing past the end', async () => {
      const codec = contractTestCodec(fixture.topicName('contract-replay'));
      await log().ensureTopic({ topic: codec.topic, partitions: 1 });
      const published = events(10, 2);
      await log().publish(codec, published);

      const middle = await log().read(codec, 0, 4, 3);
      expect(middle.map((r) => r.offset)).toEqual([4, 5, 6]);
      expect(middle.map((r) => r.event)).toEqual(published.slice(4, 7));
      const tail = await log().read(codec, 0, 8, 100);
      expect(tail.map((r) => r.offset)).toEqual([8, 9]);
      expect(await log().read(codec, 0, 10, 100)).toEqual([]);
      expect((await log().read(codec, 0, 0, 100)).map((r) => r.event)).toEqual(published);
    });

    it('should put a tombstone on the partition of its key, after the events, and read past it', async () => {
      const codec = contractTestCodec(fixture.topicName('contract-tombstones'));
      await log().ensureTopic({ topic: codec.topic, partitions: 2, compacted: true });
      const before = events(6, 3);
      const after = events(3, 3, 6);
      await log().publish(codec, before);
      await log().publishTombstones(codec.topic, ['session-1']);
      await log().publish(codec, after);
      // What each partition holds, in order: null marks the tombstone.
      const written: { key: string; event: ContractEvent | null }[] = [
        ...before.map((e) => ({ key: e.sessionId, event: e })),
        { key: 'session-1', event: null },
        ...after.map((e) => ({ key: e.sessionId, event: e })),
      ];
      const ends = await log().endOffsets(codec.topic);
      for (let partition = 0; partition < 2; partition++) {
        const expected = written
          .filter((r) => partitionOfKey(r.key, 2) === partition)
          .map((r, offset) => ({ ...r, offset }));
        expect(ends[partition]).toBe(expected.length);
        const all = await log().read(codec, partition, 0, 100, { tombstones: true });
        expect(all.map(({ key, event, offset }) => ({ key, event, offset }))).toEqual(expected);
        expect(all.every((r) => r.partition === partition && r.topic === codec.topic)).toBe(true);
        // By default a tombstone is passed over, and not counted against maxRecords.
        const eventsOnly = expected.filter((r) => r.event !== null);
        const read = await log().read(codec, partition, 0, eventsOnly.length);
        expect(read.map(({ key, event, offset }) => ({ key, event, offset }))).toEqual(eventsOnly);
      }
      const home = partitionOfKey('session-1', 2);
      const tombstoneAt = written
        .filter((r) => partitionOfKey(r.key, 2) === home)
        .findIndex((r) => r.event === null);
      const [tombstone] = await log().read(codec, home, tombstoneAt, 1, { tombstones: true });
      expect(tombstone).toMatchObject({ event: null, key: 'session-1', offset: tombstoneAt });
      const [next] = await log().read(codec, home, tombstoneAt, 1);
      expect(next.offset).toBe(tombstoneAt + 1);
      expect(next.event).not.toBeNull();
      expect(await log().read(codec, home, ends[home], 10, { tombstones: true })).toEqual([]);
    });

    it('should pin tombstones to a named partition, and refuse empty keys writing none', async () => {
      const topic = fixture.topicName('contract-tombstone-keys');
      await log().ensureTopic({ topic, partitions: 3, compacted: true });
      const pinned = (partitionOfKey('session-0', 3) + 1) % 3;
      await log().publishTombstones(topic, ['session-0', 'session-2'], { partition: pinned });
      const ends = [0, 0, 0];
      ends[pinned] = 2;
      expect(await log().endOffsets(topic)).toEqual(ends);
      const codec = contractTestCodec(topic);
      const read = await log().read(codec, pinned, 0, 10, { tombstones: true });
      expect(read.map((r) => [r.key, r.event])).toEqual([
        ['session-0', null],
        ['session-2', null],
      ]);
      expect(await log().read(codec, pinned, 0, 10)).toEqual([]);

      for (const bad of [['session-1', ''], [' '], ['session-1', null as unknown as string]]) {
        await expect(log().publishTombstones(topic, bad)).rejects.toThrow(InvalidEventError);
      }
      await log().publishTombstones(topic, []);
      expect(await log().endOffsets(topic)).toEqual(ends);
    });

    it('should refuse a batch holding an invalid event and write none of it', async () => {
      const codec = contractTestCodec(fixture.topicName('contract-invalid'));
      await log().ensureTopic({ topic: codec.topic, partitions: 1 });
      const [good, other] = events(2, 1);
      await expect(log().publish(codec, [good, { ...other, eventId: ' ' }])).rejects.toThrow(
        InvalidEventError,
      );
      const notLong = { ...other, seq: 'seven' } as unknown as ContractEvent;
      await expect(log().publish(codec, [good, notLong])).rejects.toThrow();
      expect(await log().endOffsets(codec.topic)).toEqual([0]);

      await log().publish(codec, [good]);
      expect((await log().read(codec, 0, 0, 10)).map((r) => r.event)).toEqual([good]);
    });
  });
}
