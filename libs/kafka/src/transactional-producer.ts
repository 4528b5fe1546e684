import { errorMessage } from '@engram/core';
import { Logger } from '@nestjs/common';
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { reliableProducerConfig } from './kafka-client';

/**
 * Broker answers after which a transactional producer cannot go on: its epoch is stale. The
 * coordinator bumps the epoch when a transaction outlives its timeout (60 s), as one left open
 * through a broker outage does; kafkajs never recovers from that by itself.
 */
const FENCED = new Set([
  'INVALID_PRODUCER_EPOCH',
  'PRODUCER_FENCED',
  'INVALID_PRODUCER_ID_MAPPING',
  'INVALID_TXN_STATE',
]);

/** True when `error` leaves the producer unusable: fenced, or kafkajs' transaction state stuck. */
export function isProducerFencing(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const type = (error as { type?: unknown }).type;
  if (typeof type === 'string' && FENCED.has(type)) return true;
  // kafkajs' own state machine, left mid-transaction by an abort that failed.
  return /Transaction state exception/.test(error.message);
}

/**
 * The exactly-once processor's producer (one stable transactional id per instance). After a
 * fencing failure it is replaced by a new producer with the same id, whose initialisation aborts
 * whatever the old one left open; the batch is then retried from its consumed offsets, so nothing
 * is lost or written twice (the aborted transaction is invisible to read_committed consumers).
 */
export class RecoverableTransactionalProducer {
  private readonly logger = new Logger(RecoverableTransactionalProducer.name);
  private producer?: Producer;
  private fenced = false;

  /** `transactionTimeoutMs`: kafkajs' default (60 s) unless given (tests make it time out). */
  constructor(
    private readonly kafka: Kafka,
    private readonly transactionalId: string,
    private readonly transactionTimeoutMs?: number,
  ) {}

  async connect(): Promise<void> {
    this.producer = this.kafka.producer(
      reliableProducerConfig({
        transactionalId: this.transactionalId,
        ...(this.transactionTimeoutMs !== undefined && {
          transactionTimeout: this.transactionTimeoutMs,
        }),
      }),
    );
    await this.producer.connect();
  }

  /** A new transaction, on a new producer if the last failure fenced the current one. */
  async transaction(): Promise<Transaction> {
    if (this.fenced && this.producer) {
      await this.producer.disconnect().catch(() => undefined);
      await this.connect();
      this.fenced = false;
      this.logger.warn(`replaced the fenced producer ${this.transactionalId}`);
    }
    if (!this.producer) throw new Error('the transactional producer is not connected');
    return this.producer.transaction();
  }

  /** Notes a failed transaction; a fencing failure makes the next transaction use a new producer. */
  failed(error: unknown): void {
    if (!isProducerFencing(error)) return;
    this.fenced = true;
    this.logger.warn(`producer ${this.transactionalId} fenced: ${errorMessage(error)}`);
  }

  async disconnect(): Promise<void> {
    await this.producer?.disconnect();
    this.producer = undefined;
  }
}
