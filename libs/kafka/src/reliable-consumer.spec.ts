import { DecodeError, InvalidEventError, type Delivered, type TopicCodec } from '@engram/core';
import type { Batch, EachBatchPayload, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { describe, expect, it, vi } from 'vitest';
import type { AvroRegistry } from './avro-registry';
import type { DeadLetterRecord, DeadLetterWriter } from './dead-letter-writer';
import { isTombstone, type DeliveredOrTombstone } from './delivered-event';
import { ReliableConsumer } from './reliable-consumer';
import { readWireFrame, writeWireFrame } from './wire-format';

interface Note {
  id: string;
  text: string;
}

const codecOf = (topic: string): TopicCodec<Note> => ({
  topic,
  subject: `${topic}-value`,
  schema: { type: 'record', name: 'Note', fields: [] },
  toAvro: (note) => note,
  fromAvro: (value) => value as Note,
  key: (note) => note.id,
});

const NOTES = 'notes';
const PROMPTS = 'prompts';

/** A record as kafkajs hands it over; `value: null` is a tombstone. */
function record(
  offset: number,
  key: string | null,
  value: Note | null,
  headers: IHeaders = {},
): KafkaMessage {
  return {
    key: key === null ? null : Buffer.from(key),
    value: value === null ? null : writeWireFrame(1, Buffer.from(JSON.stringify(value))),
    offset: String(offset),
    timestamp: '0',
    attributes: 0,
    headers,
  };
}

/**
 * A ReliableConsumer on a fake kafkajs consumer: `deliver` runs one batch through `eachBatch` as
 * kafkajs would. The registry reads the Confluent frame (so a null value fails as it does for
 * real) and parses the payload as JSON.
 */
function setup() {
  let eachBatch: ((payload: EachBatchPayload) => Promise<void>) | undefined;
  const commits: { topic: string; partition: number; offset: string }[] = [];
  const batchEnds: ((event: { payload: Record<string, unknown> }) => void)[] = [];
  const consumer = {
    events: { END_BATCH_PROCESS: 'consumer.end_batch_process' },
    on: (_event: string, listener: (typeof batchEnds)[number]) => {
      batchEnds.push(listener);
      return () => undefined;
    },
    connect: () => Promise.resolve(),
    subscribe: () => Promise.resolve(),
    run: (config: { eachBatch: (payload: EachBatchPayload) => Promise<void> }) => {
      eachBatch = config.eachBatch;
      return Promise.resolve();
    },
    commitOffsets: (offsets: typeof commits) => {
      commits.push(...offsets);
      return Promise.resolve();
    },
    disconnect: () => Promise.resolve(),
  };
  const kafka = { consumer: () => consumer } as unknown as Kafka;
  const registry = {
    decode: vi.fn((bytes: Buffer | null): Promise<unknown> => {
      const { payload } = readWireFrame(bytes);
      return Promise.resolve(JSON.parse(payload.toString()));
    }),
  };
  const dead: DeadLetterRecord[] = [];
  const deadLetters = {
    write: (deadLetter: DeadLetterRecord) => {
      dead.push(deadLetter);
      return Promise.resolve();
    },
  };
  const sut = new ReliableConsumer(
    kafka,
    registry as unknown as AvroRegistry,
    deadLetters as unknown as DeadLetterWriter,
    { groupId: 'group', retry: { initialMs: 1, maxMs: 1 } },
  );
  /** One fetch's batch; `end`: its last offset, past the last message if markers follow it. */
  const deliver = async (topic: string, messages: KafkaMessage[], end?: string): Promise<void> => {
    if (!eachBatch) throw new Error('start() first');
    const lastOffset = () => end ?? messages[messages.length - 1].offset;
    await eachBatch({
      batch: { topic, partition: 2, messages, lastOffset } as unknown as Batch,
      resolveOffset: () => undefined,
      heartbeat: () => Promise.resolve(),
      isRunning: () => true,
      isStale: () => false,
      pause: () => () => undefined,
    } as unknown as EachBatchPayload);
  };
  /** What kafkajs reports after a fetch of nothing but markers (or aborted records). */
  const passRecordless = (topic: string, lastOffset: string): void => {
    for (const listener of batchEnds) {
      listener({ payload: { topic, partition: 2, batchSize: 0, lastOffset } });
    }
  };
  return { sut, deliver, passRecordless, commits, dead, registry };
}

describe('ReliableConsumer tombstones', () => {
  it('should hand a tombstone with its key to a route that takes tombstones, and commit it', async () => {
    const { sut, deliver, commits, dead, registry } = setup();
    const handled: DeliveredOrTombstone<Note>[] = [];
    await sut
      .subscribe(codecOf(NOTES), (items) => void handled.push(...items), { tombstones: true })
      .start();

    await deliver(NOTES, [
      record(7, 'n1', { id: 'n1', text: 'one' }),
      record(8, 'n1', null, { origin: 'compaction-test' }),
    ]);

    expect(handled).toEqual([
      {
        event: { id: 'n1', text: 'one' },
        topic: NOTES,
        partition: 2,
        offset: '7',
        key: 'n1',
        headers: {},
      },
      {
        event: null,
        topic: NOTES,
        partition: 2,
        offset: '8',
        key: 'n1',
        headers: { origin: 'compaction-test' },
      },
    ]);
    expect(handled.map(isTombstone)).toEqual([false, true]);
    // The tombstone never reached the registry.
    expect(registry.decode).toHaveBeenCalledTimes(1);
    expect(dead).toEqual([]);
    expect(commits).toEqual([{ topic: NOTES, partition: 2, offset: '9' }]);
    expect(sut.counters).toMatchObject({ processed: 2, deadLettered: 0 });
  });

  it('should dead-letter a tombstone without a key (null or empty) as an InvalidEventError', async () => {
    const { sut, deliver, commits, dead } = setup();
    const handled: DeliveredOrTombstone<Note>[] = [];
    await sut
      .subscribe(codecOf(NOTES), (items) => void handled.push(...items), { tombstones: true })
      .start();

    await deliver(NOTES, [record(1, null, null), record(2, '', null), record(3, 'n3', null)]);

    expect(handled.map((item) => [item.offset, item.key, item.event])).toEqual([['3', 'n3', null]]);
    expect(dead.map((d) => d.source.offset)).toEqual(['1', '2']);
    for (const deadLetter of dead) {
      expect(deadLetter.error).toBeInstanceOf(InvalidEventError);
      expect((deadLetter.error as Error).message).toMatch(/tombstone at notes\[2\]@\d has no key/);
      expect(deadLetter.value).toBeNull();
    }
    expect(commits).toEqual([{ topic: NOTES, partition: 2, offset: '4' }]);
  });

  it('should keep a null value poison (DecodeError) on a route without the flag', async () => {
    const { sut, deliver, commits, dead } = setup();
    const handled: Delivered<Note>[] = [];
    const tombstones: DeliveredOrTombstone<Note>[] = [];
    await sut
      .subscribe(codecOf(PROMPTS), (items) => void handled.push(...items))
      .subscribe(codecOf(NOTES), (items) => void tombstones.push(...items), { tombstones: true })
      .start();

    await deliver(PROMPTS, [record(0, 'p1', null), record(1, 'p2', { id: 'p2', text: 'two' })]);

    expect(handled.map((item) => item.event)).toEqual([{ id: 'p2', text: 'two' }]);
    expect(tombstones).toEqual([]);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      source: { topic: PROMPTS, partition: 2, offset: '0' },
      value: null,
    });
    expect(dead[0].key?.toString()).toBe('p1');
    expect(dead[0].error).toBeInstanceOf(DecodeError);
    expect(commits).toEqual([{ topic: PROMPTS, partition: 2, offset: '2' }]);
  });

  it('should dead-letter only the tombstone a handler refuses for good', async () => {
    const { sut, deliver, dead, commits } = setup();
    const deleted: string[] = [];
    await sut
      .subscribe(
        codecOf(NOTES),
        (items) => {
          for (const item of items) {
            if (item.event !== null) continue;
            if (item.key === 'protected') throw new InvalidEventError('cannot delete it');
            deleted.push(item.key);
          }
        },
        { tombstones: true },
      )
      .start();

    await deliver(NOTES, [record(4, 'protected', null), record(5, 'n5', null)]);

    expect(deleted).toContain('n5');
    expect(dead.map((d) => [d.source.offset, d.key?.toString(), d.value])).toEqual([
      ['4', 'protected', null],
    ]);
    expect(commits).toEqual([{ topic: NOTES, partition: 2, offset: '6' }]);
  });

  it('should make a handler on a tombstone route handle null (checked by the compiler)', () => {
    const { sut } = setup();
    const onlyEvents = (items: Delivered<Note>[]) => void items.map((item) => item.event.text);
    const nullable = (items: Delivered<Note | null>[]) => void items.map((item) => item.event);
    // @ts-expect-error a Delivered<Note> handler would read `event.text` of a tombstone
    sut.subscribe(codecOf(NOTES), onlyEvents, { tombstones: true });
    sut.subscribe(codecOf(NOTES), nullable, { tombstones: true });
    sut.subscribe(codecOf(PROMPTS), onlyEvents);
    sut.subscribe(codecOf(PROMPTS), onlyEvents, { tombstones: false });
    expect(true).toBe(true);
  });
});

describe('ReliableConsumer on topics written in transactions', () => {
  it('should commit a batch to its end when a commit marker follows its last record', async () => {
    const { sut, deliver, commits } = setup();
    await sut.subscribe(codecOf(NOTES), () => undefined).start();

    // Record 3, then its transaction's marker at 4: the batch ends at 4, and so does kafkajs's
    // position; a commit at 4 would leave the group one short of the end for good.
    await deliver(NOTES, [record(3, 'n3', { id: 'n3', text: 'three' })], '4');

    expect(commits).toEqual([{ topic: NOTES, partition: 2, offset: '5' }]);
  });

  it('should commit past a fetch of markers or aborted records only, on its own topics', async () => {
    const { sut, passRecordless, commits } = setup();
    await sut.subscribe(codecOf(NOTES), () => undefined).start();

    passRecordless(NOTES, '11');
    passRecordless('someone-elses-topic', '4');

    expect(commits).toEqual([{ topic: NOTES, partition: 2, offset: '12' }]);
  });
});
