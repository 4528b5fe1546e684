import { topicOfRecord, type RecordName, type Typed } from '@engram/contracts';
import type { EventLogPort, TopicCodec } from '@engram/core';
import { contractCodec, valueSubject } from '@engram/core';
import type { PublishTombstones } from './feedback.service';
import type { PublishRecords } from './remember.service';

/** The contract codec of a record's topic under a topic prefix (ENGRAM_TOPIC_PREFIX). */
export function prefixedRecordCodec(prefix: string, record: Typed): TopicCodec<Typed> {
  const topic = topicOfRecord(record.type).topic;
  const codec = contractCodec(topic as never) as TopicCodec<Typed>;
  const name = prefix + topic;
  return { ...codec, topic: name, subject: valueSubject(name) };
}

/**
 * Remember's publisher on an event log (Kafka or the embedded one): each record on its contract
 * topic, in order. Remember publishes one or two records, so one publish call each is enough.
 */
export function publishRecordsTo(
  log: Pick<EventLogPort, 'publish'>,
  prefix: string,
): PublishRecords {
  return async (records) => {
    for (const record of records) await log.publish(prefixedRecordCodec(prefix, record), [record]);
  };
}

/**
 * Feedback's deleter on an event log: tombstones of the keys on the (prefixed) contract topic of
 * a record type, each on its key's partition. Only compacted topics delete by key: any other is
 * refused before anything is written.
 */
export function publishTombstonesTo(
  log: Pick<EventLogPort, 'publishTombstones'>,
  prefix: string,
): PublishTombstones {
  return async (record: RecordName, keys: string[]) => {
    const spec = topicOfRecord(record);
    if (!spec.compacted) {
      throw new RangeError(`${spec.topic} is not compacted: a tombstone would delete nothing`);
    }
    await log.publishTombstones(prefix + spec.topic, keys);
  };
}
