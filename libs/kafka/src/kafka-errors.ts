import { DownstreamUnavailableError, EngramError } from '@engram/core';
import { KafkaJSProtocolError } from 'kafkajs';

/**
 * kafkajs errors that mean the broker (or its coordinator) is away or busy, not that the record
 * or the request is wrong: connections refused, closed or timed out, metadata or a broker not
 * found, a lock that timed out waiting on one, kafkajs' own retries run out on any of those.
 */
const BROKER_UNAVAILABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSLockTimeout',
]);

/** What kafkajs throws, as a plain Error, at a broker it has not (re)connected yet. */
const NOT_CONNECTED = /^Broker not connected$/;

/**
 * Classifies a failure of a Kafka operation at the adapter edge (libs/errors' rule): a broker
 * outage becomes DownstreamUnavailableError, which consumers retry for as long as it lasts
 * (pause and retry, never skip). Unclassified, it would count as an unknown failure and a long
 * outage could send good records to the dead-letter topic. Anything else comes back unchanged.
 */
export function classifyKafkaError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof EngramError) return error;
  const retriableProtocolError =
    error.name === 'KafkaJSProtocolError' && (error as { retriable?: unknown }).retriable === true;
  if (
    BROKER_UNAVAILABLE.has(error.name) ||
    retriableProtocolError ||
    NOT_CONNECTED.test(error.message)
  ) {
    return new DownstreamUnavailableError(
      `kafka: ${error.message}`,
      { kafkaError: error.name },
      {
        cause: error,
      },
    );
  }
  return error;
}

/** Runs `work`, classifying what a Kafka operation in it throws (classifyKafkaError). */
export async function classifyingKafkaErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw classifyKafkaError(error);
  }
}

/** Protocol errors of a partition whose leader is not (yet) where the metadata says. */
const LEADER_MOVING = new Set(['LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION']);

/**
 * An admin call about a topic's partitions, asked again while a partition's leader is not ready
 * yet — as happens for a moment after a topic is created (the admin client retries a missing
 * topic, but gives up at once on a moving leader). Up to 10 more attempts, 100 ms further apart each.
 */
export async function whileLeaderMoves<T>(call: () => Promise<T>, attempt = 0): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof KafkaJSProtocolError) || !LEADER_MOVING.has(error.type)) throw error;
    if (attempt >= 10) throw error;
    await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
    return whileLeaderMoves(call, attempt + 1);
  }
}
