import { randomUUID } from 'node:crypto';
import { DownstreamUnavailableError } from '@engram/core';
import {
  DeadLetterWriter,
  ensureTopics,
  EventPublisher,
  ExactlyOnceProcessor,
  reliableProducerConfig,
  type ExactlyOnceStage,
} from '@engram/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readAllCommitted,
  readCommitted,
  scratchCodec,
  testKafka,
  testRegistry,
  topicSize,
  type ScratchEvent,
} from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

describe('exactly-once consume-transform-produce', () => {
  const kafka = testKafka();
  const registry = testRegistry();
  const publisher = new EventPublisher(kafka, registry);

  beforeAll(async () => {
    await publisher.connect();
  });

  afterAll(async () => {
    await publisher.disconnect();
  });

  it('should hide an aborted transaction from read_committed consumers', async () => {
    const topic = uniqueName('it.txn');
    await ensureTopics(kafka, [{ topic, partitions: 1, withDeadLetter: false }]);
    const producer = kafka.producer(reliableProducerConfig({ transactionalId: uniqueName('txn') }));
    await producer.connect();
    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: [{ value: 'aborted-1' }, { value: 'aborted-2' }] });
    await aborted.abort();
    const committed = await producer.transaction();
    await committed.send({ topic, messages: [{ value: 'committed' }] });
    await committed.commit();
    await producer.disconnect();

    const seen = await readCommitted(kafka, topic, 1);
    // The aborted records and both transaction markers are in the log, yet invisible.
    expect(await topicSize(kafka, topic)).toBeGreaterThanOrEqual(4);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(seen.map((m) => m.value?.toString())).toEqual(['committed']);
  });

  it('should emit each output exactly once even when a transaction aborts half-written', async () => {
    const input = scratchCodec(uniqueName('it.eos-in'));
    const output = scratchCodec(uniqueName('it.eos-out'));
    await ensureTopics(kafka, [
      { topic: input.topic, partitions: 2 },
      { topic: output.topic, partitions: 2 },
    ]);
    const inputs: ScratchEvent[] = Array.from({ length: 20 }, (_, n) => ({
      eventId: randomUUID(),
      sessionId: `session-${n % 4}`,
      text: `event ${n}`,
    }));
    await publisher.publish(input, inputs);

    // The first attempt at sending the output of "event 7" fails after earlier outputs of its
    // batch were already written inside the transaction: the abort must make them vanish.
    let failuresLeft = 1;
    const failingOutput = {
      ...output,
      toAvro: (e: ScratchEvent) => {
        if (e.text === 'EVENT 7' && failuresLeft-- > 0) {
          throw new DownstreamUnavailableError('broker hiccup');
        }
        return e;
      },
    };
    let aborts = 0;
    const stage: ExactlyOnceStage<ScratchEvent> = {
      transform: (items) => [
        {
          codec: failingOutput,
          events: items.map((i) => ({ ...i.event, text: i.event.text.toUpperCase() })),
        },
      ],
      onAborted: () => {
        aborts += 1;
      },
    };
    const deadLetters = new DeadLetterWriter(kafka, 'it');
    await deadLetters.connect();
    const processor = new ExactlyOnceProcessor(kafka, registry, deadLetters, {
      groupId: uniqueName('group'),
      transactionalId: uniqueName('eos'),
      retry: { initialMs: 50, maxMs: 200 },
    }).subscribe(input, stage);
    await processor.start();
    const received = await readAllCommitted(kafka, output.topic, 20);
    await processor.stop();
    await deadLetters.disconnect();

    const decoded = await Promise.all(received.map((m) => registry.decode<ScratchEvent>(m.value)));
    expect(aborts).toBe(1);
    expect(decoded.map((e) => e.text).sort()).toEqual(
      inputs.map((e) => e.text.toUpperCase()).sort(),
    );
  });
});
