import type { EngramConfig } from '@engram/config';
import {
  envelopeProblems,
  eventKey,
  fromAvroValue,
  loadAvroSchema,
  topicOfRecord,
  topicSpec,
  toAvroValue,
  TOPICS,
  type TopicName,
  type Typed,
} from '@engram/contracts';
import type { TopicCodec } from '@engram/core';
import type { PublishEvents } from '../hook-spool';
import type { HookPublisher } from './hook-types';

// Where a hook's events go: the embedded log in the data directory, or the configured Kafka.
// Loaded by every hook process: imports stay light (see hook.command.ts); the heavy stacks are
// imported inside the functions that need them.

/**
 * The contract codec of an agent topic under the configured prefix, built from
 * @engram/contracts alone. Same fields as libs/kafka's contractCodec / replay-targets'
 * prefixedCodec, without loading the Kafka client into every hook process (the distributed
 * publisher uses prefixedCodec itself).
 */
function embeddedCodec(config: EngramConfig, topic: TopicName): TopicCodec<Typed> {
  const spec = topicSpec(topic)!;
  const name = config.topicPrefix + topic;
  return {
    topic: name,
    subject: `${name}-value`,
    schema: loadAvroSchema(spec.avroFile) as object,
    toAvro: (event) => toAvroValue(event),
    fromAvro: (value) => fromAvroValue<TopicName>(topic, value),
    key: (event) => eventKey(event),
    validate: (event) => envelopeProblems(event),
  };
}

/** Publishes in order, one call per run of events of the same topic (as `engram replay`). */
function publishInRuns(
  codecOf: (topic: TopicName) => TopicCodec<Typed>,
  publish: (codec: TopicCodec<Typed>, events: Typed[]) => Promise<void>,
): PublishEvents {
  return async (events) => {
    const runs: { topic: TopicName; events: Typed[] }[] = [];
    for (const event of events) {
      const topic = topicOfRecord(event.type).topic as TopicName;
      const last = runs[runs.length - 1];
      if (last?.topic === topic) last.events.push(event);
      else runs.push({ topic, events: [event] });
    }
    for (const run of runs) await publish(codecOf(run.topic), run.events);
  };
}

const AGENT_TOPICS: readonly TopicName[] = [
  TOPICS.prompts.topic,
  TOPICS.toolCalls.topic,
  TOPICS.lifecycle.topic,
];

/**
 * The embedded log in `dataDir`. SQLite calls are synchronous, so the write-lock wait is bounded
 * by the budget (a busy `engram start` cannot hold the hook past it), then SQLITE_BUSY → spool.
 */
export async function embeddedHookPublisher(
  config: EngramConfig,
  dataDir: string,
  busyTimeoutMs: number,
): Promise<HookPublisher> {
  // The two modules, not the @engram/embedded barrel: the barrel loads @nestjs/common (the
  // exactly-once processor's Logger), ~240 ms of a 300 ms budget on this 2-core machine.
  const [{ SqliteEventLog }, { SqliteEventLogAdapter }] = await Promise.all([
    import('../../../../libs/embedded/src/sqlite-event-log'),
    import('../../../../libs/embedded/src/sqlite-event-log.adapter'),
  ]);
  const log = SqliteEventLog.open({ dataDir, busyTimeoutMs });
  try {
    const port = new SqliteEventLogAdapter(log);
    for (const topic of AGENT_TOPICS) {
      await port.ensureTopic({
        topic: config.topicPrefix + topic,
        partitions: config.segmenter.partitions,
        compacted: false,
      });
    }
    const codecs = new Map<TopicName, TopicCodec<Typed>>();
    const codecOf = (topic: TopicName) => {
      let codec = codecs.get(topic);
      if (!codec) codecs.set(topic, (codec = embeddedCodec(config, topic)));
      return codec;
    };
    return {
      publish: publishInRuns(codecOf, (codec, events) => port.publish(codec, events)),
      close: () => Promise.resolve(log.close()),
    };
  } catch (error) {
    log.close();
    throw error;
  }
}

/**
 * The configured Kafka. Connects a producer only (no topic or schema administration: the
 * services' start-up does that; a missing topic fails the publish and the events are spooled).
 */
export async function distributedHookPublisher(config: EngramConfig): Promise<HookPublisher> {
  const { AvroRegistry, createKafka, KafkaEventLog } = await import('@engram/kafka');
  const { prefixedCodec } = await import('./replay-targets');
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'engram-hook' });
  const port = new KafkaEventLog(kafka, new AvroRegistry(config.schemaRegistry.url));
  await port.connect();
  return {
    publish: publishInRuns(
      (topic) => prefixedCodec(config, topic),
      (codec, events) => port.publish(codec, events),
    ),
    close: () => port.disconnect(),
  };
}
