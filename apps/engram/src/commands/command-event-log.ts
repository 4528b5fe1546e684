import { loadConfig } from '@engram/config';
import type { EventLogPort } from '@engram/core';
import { SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { AvroRegistry, createKafka, KafkaEventLog } from '@engram/kafka';
import type { Kafka } from 'kafkajs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface CommandLogOptions {
  /** Embedded mode's data directory (ignored with `distributed`). */
  dataDir: string;
  distributed?: boolean;
  /** Kafka client id, so the broker's logs name the command. */
  clientId: string;
}

/**
 * Runs `read` on the event log a reading command uses: the SQLite log in `--data-dir`, or the
 * configured Kafka with `--distributed`; closes it after. `topic` is the topic the command reads:
 * when the embedded log does not have it yet (no service wrote it), `read` is not called and
 * `nothing` is the answer, as on a Kafka cluster without that topic.
 */
export async function readCommandLog<T>(
  options: CommandLogOptions,
  topic: string,
  read: (log: EventLogPort) => Promise<T>,
  nothing: () => T,
): Promise<T> {
  if (options.distributed) {
    const config = loadConfig();
    const kafka = createKafka({ brokers: config.kafka.brokers, clientId: options.clientId });
    if (!(await topicExists(kafka, topic))) return nothing();
    const log = new KafkaEventLog(kafka, new AvroRegistry(config.schemaRegistry.url));
    await log.connect();
    try {
      return await read(log);
    } finally {
      await log.disconnect();
    }
  }
  if (!existsSync(join(options.dataDir, 'events.db'))) {
    throw new Error(
      `no event log in ${options.dataDir} (--data-dir): run \`engram start\` and replay events first`,
    );
  }
  const log = SqliteEventLog.open({ dataDir: options.dataDir });
  try {
    if (log.topic(topic) === undefined) return nothing();
    return await read(new SqliteEventLogAdapter(log));
  } finally {
    log.close();
  }
}

async function topicExists(kafka: Kafka, topic: string): Promise<boolean> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).includes(topic);
  } finally {
    await admin.disconnect();
  }
}
