import {
  InvalidEventError,
  tombstoneKeyProblems,
  type EventLogPort,
  type LoggedEvent,
  type LoggedEventOrTombstone,
  type LoggedTombstone,
  type PublishOptions,
  type ReadOptions,
  type TopicCodec,
  type TopicDefinition,
} from '@engram/core';
import { decodeEvent, encodeEvent } from './json-event-codec';
import { classifyStorageError, type LogRecord, type SqliteEventLog } from './sqlite-event-log';

/** The EventLogPort on the embedded SQLite log (typed events stored as JSON text). */
export class SqliteEventLogAdapter implements EventLogPort {
  constructor(readonly log: SqliteEventLog) {}

  ensureTopic(definition: TopicDefinition): Promise<void> {
    return this.run(() =>
      this.log.ensureTopic(definition.topic, definition.partitions, {
        compacted: definition.compacted,
        withDeadLetter: true,
      }),
    );
  }

  publish<E>(codec: TopicCodec<E>, events: E[], options: PublishOptions = {}): Promise<void> {
    return this.run(() => {
      // Every event is checked before anything is written: one bad event writes nothing.
      const records = events.map((event) => encodeEvent(codec, event, options.partition));
      this.log.append(codec.topic, records);
    });
  }

  publishTombstones(topic: string, keys: string[], options: PublishOptions = {}): Promise<void> {
    return this.run(() => {
      const problems = tombstoneKeyProblems(keys);
      if (problems.length > 0) {
        throw new InvalidEventError(`${topic}: ${problems.join('; ')}`, { topic });
      }
      if (keys.length === 0) return;
      // Without a partition the log puts each key on partitionOfKey(key), as it does events.
      this.log.append(
        topic,
        keys.map((key) => ({ key, value: null, partition: options.partition })),
      );
    });
  }

  read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
    options?: { tombstones?: false },
  ): Promise<LoggedEvent<E>[]>;
  read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
    options: ReadOptions,
  ): Promise<LoggedEventOrTombstone<E>[]>;
  read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
    options: ReadOptions = {},
  ): Promise<LoggedEventOrTombstone<E>[]> {
    return this.run(() => {
      const items: LoggedEventOrTombstone<E>[] = [];
      let from = fromOffset;
      // Tombstones passed over do not count: read on until maxRecords items or the end.
      while (items.length < maxRecords) {
        const page = this.log.read(codec.topic, partition, from, maxRecords - items.length);
        if (page.length === 0) break;
        for (const record of page) {
          if (record.value !== null) {
            items.push({ ...decodeEvent(codec, record), offset: record.offset });
          } else if (options.tombstones) {
            items.push(loggedTombstone(record));
          }
        }
        from = page[page.length - 1].offset + 1;
      }
      return items;
    });
  }

  endOffsets(topic: string): Promise<number[]> {
    return this.run(() => this.log.endOffsets(topic));
  }

  private run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve) => resolve(work())).catch((error: unknown) => {
      throw classifyStorageError(error);
    });
  }
}

/** A stored null value → a tombstone of its key; without a key it deletes nothing: refused. */
function loggedTombstone(record: LogRecord): LoggedTombstone {
  const { topic, partition, offset, key, headers } = record;
  if (key === null || key === '') {
    throw new InvalidEventError(
      `tombstone at ${topic}[${partition}]@${offset} has no key: nothing to delete`,
      { topic, partition, offset },
    );
  }
  return { event: null, topic, partition, offset, key, headers };
}
