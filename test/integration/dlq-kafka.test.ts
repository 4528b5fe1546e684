import { InvalidEventError } from '@engram/core';
import { DeadLetterWriter, ensureTopics, EventPublisher } from '@engram/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqList, dlqRedrive, dlqShow } from '../../apps/engram/src/commands/dlq.command';
import { deadLettersSince } from '../../apps/engram/src/dead-letters';
import { kafkaDeadLetters } from '../../apps/engram/src/dead-letters-kafka';
import { readCommitted, scratchCodec, testKafka, testRegistry } from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

// `engram dlq --distributed` and `replay --wait --distributed`'s report (issue 19 finding 5):
// the `<prefix>….dlq` topics of the real Kafka, under this run's own topic prefix.

describe('dead letters on Kafka', () => {
  const kafka = testKafka();
  const registry = testRegistry();
  const prefix = `${uniqueName('it-dlq')}.`;
  const source = `${prefix}agent.prompts.v1`;
  const writer = new DeadLetterWriter(kafka, 'engram-segmenter');
  const publisher = new EventPublisher(kafka, registry);
  const SECRET = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';

  beforeAll(async () => {
    // ensureTopics creates `<topic>.dlq` beside each topic.
    await ensureTopics(kafka, [{ topic: source, partitions: 2 }]);
    await Promise.all([writer.connect(), publisher.connect()]);
  });

  afterAll(async () => {
    await Promise.all([writer.disconnect(), publisher.disconnect()]);
  });

  it('should list, show (Avro decoded, redacted) and redrive once, and count what came since', async () => {
    const store = await kafkaDeadLetters(kafka, registry, prefix);
    try {
      const before = await store.ends();
      // An Avro record as a stage dead-letters it: the source record's bytes as they were.
      const codec = scratchCodec(uniqueName('it.dlq.scratch'));
      const schemaId = await registry.register(codec.subject, codec.schema);
      const bytes = await registry.encode(schemaId, {
        eventId: 'e-1',
        sessionId: 's1',
        text: `token ${SECRET}`,
      });
      await writer.write({
        source: { topic: source, partition: 1, offset: '41' },
        key: Buffer.from('s1'),
        value: bytes,
        error: new InvalidEventError('prompt text is 200000 characters, over the limit of 100000'),
      });

      const since = await deadLettersSince(store, before);
      expect(since).toHaveLength(1);
      const listed = await dlqList(store);
      expect(listed.map((entry) => entry.view)).toMatchObject([
        {
          id: `${source}.dlq:0:0`,
          errorClass: 'InvalidEventError',
          sourceTopic: source,
          sourcePartition: 1,
          sourceOffset: '41',
          service: 'engram-segmenter',
        },
      ]);
      const shown = await dlqShow(store, `${source}.dlq:0:0`);
      expect(shown!.payload.text).toContain('"eventId":"e-1"');
      expect(shown!.payload.text).not.toContain(SECRET);

      expect(await dlqRedrive(store, { all: true })).toEqual([
        { id: `${source}.dlq:0:0`, outcome: 'redriven', to: source },
      ]);
      const [republished] = await readCommitted(kafka, source, 1);
      expect(republished.key?.toString()).toBe('s1');
      expect(Buffer.compare(republished.value!, bytes)).toBe(0);
      expect(await dlqRedrive(store, { ids: [`${source}.dlq:0:0`] })).toMatchObject([
        { outcome: 'already' },
      ]);
      expect((await dlqList(store)).map((entry) => entry.redriven)).toEqual([true]);
    } finally {
      await store.close();
    }
  }, 120_000);
});
