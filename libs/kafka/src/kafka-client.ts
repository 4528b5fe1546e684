import { Logger } from '@nestjs/common';
import {
  Kafka,
  Partitioners,
  logLevel,
  type LogEntry,
  type ProducerConfig,
  type logCreator,
} from 'kafkajs';

/** Bridges kafkajs' own logging into the Nest logger, one context per kafkajs namespace. */
const nestLogCreator: logCreator = () => {
  return ({ namespace, level, log }: LogEntry) => {
    const { message, ...fields } = log;
    const logger = new Logger(`kafkajs:${namespace}`);
    const line = `${message} ${JSON.stringify(fields)}`;
    if (level === logLevel.ERROR) logger.error(line);
    else if (level === logLevel.WARN) logger.warn(line);
    else logger.debug(line);
  };
};

export interface KafkaConnection {
  brokers: string[];
  clientId: string;
}

export function createKafka({ brokers, clientId }: KafkaConnection): Kafka {
  return new Kafka({
    brokers,
    clientId,
    logLevel: logLevel.WARN,
    logCreator: nestLogCreator,
    retry: { initialRetryTime: 100, retries: 8 },
  });
}

/**
 * Retries of an idempotent (or transactional) producer: unbounded, kafkajs' own default for one
 * (KIP-98: retries=MAX), because giving up leaves its sequence numbers behind the broker's, and a
 * later send can then be dropped as a duplicate or refused. The client's bounded retries
 * (createKafka) would otherwise apply, and kafkajs warns "Limiting retries for the idempotent
 * producer may invalidate EoS guarantees". A send during an outage so waits for the broker (pause
 * and retry, never skip); the backoff is capped low so it resumes within seconds of its return.
 */
export const IDEMPOTENT_PRODUCER_RETRY = {
  retries: Number.MAX_SAFE_INTEGER,
  maxRetryTime: 5_000,
} as const;

/**
 * Producer settings every Engram producer shares: idempotent with one request in flight (no
 * duplicates or reordering on broker retries), unbounded retries (IDEMPOTENT_PRODUCER_RETRY) and
 * the Java-compatible murmur2 partitioner, so a key lands on the same partition whichever client
 * wrote it.
 */
export function reliableProducerConfig(extra: ProducerConfig = {}): ProducerConfig {
  return {
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { ...IDEMPOTENT_PRODUCER_RETRY },
    ...extra,
  };
}
