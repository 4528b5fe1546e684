// A child process for the crash test: an exactly-once stage (in → out, upper-cased) in small
// batches, printing "committed" after each transaction, until it is killed.
import type { ExactlyOnceStage, TopicCodec } from '@engram/core';
import { EmbeddedExactlyOnceProcessor } from '../embedded-exactly-once-processor';
import { SqliteEventLog } from '../sqlite-event-log';

export interface CrashEvent {
  eventId: string;
  sessionId: string;
  text: string;
}

export function crashCodec(topic: string): TopicCodec<CrashEvent> {
  return {
    topic,
    subject: `${topic}-value`,
    schema: {
      type: 'record',
      name: 'CrashEvent',
      namespace: 'engram.test',
      fields: ['eventId', 'sessionId', 'text'].map((name) => ({ name, type: 'string' })),
    },
    toAvro: (event) => event,
    fromAvro: (value) => value as CrashEvent,
    key: (event) => event.sessionId,
  };
}

export function upperCaseStage(onCommitted: () => void = () => undefined) {
  const output = crashCodec('out');
  const stage: ExactlyOnceStage<CrashEvent> = {
    transform: (items) => [
      {
        codec: output,
        events: items.map((i) => ({ ...i.event, text: i.event.text.toUpperCase() })),
      },
    ],
    onCommitted,
  };
  return stage;
}

if (require.main === module) {
  const [dataDir] = process.argv.slice(2);
  const log = SqliteEventLog.open({ dataDir });
  const processor = new EmbeddedExactlyOnceProcessor(log, {
    groupId: 'crash',
    service: 'crash-test',
    retry: { initialMs: 10, maxMs: 100 },
    maxBatchRecords: 5,
  }).subscribe(
    crashCodec('in'),
    upperCaseStage(() => process.stdout.write('committed\n')),
  );
  void processor.start();
}
