import type {
  EventLogPort,
  LoggedEvent,
  PublishOptions,
  TopicCodec,
  TopicDefinition,
} from '@engram/core';
import { decodeEvent, encodeEvent } from './json-event-codec';
import { classifyStorageError, type SqliteEventLog } from './sqlite-event-log';

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

  read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
  ): Promise<LoggedEvent<E>[]> {
    return this.run(() =>
      this.log
        .read(codec.topic, partition, fromOffset, maxRecords)
        .map((record) => ({ ...decodeEvent(codec, record), offset: record.offset })),
    );
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
