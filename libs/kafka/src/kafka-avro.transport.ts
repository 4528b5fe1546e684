import { MisconfigurationError, type BackoffOptions } from '@engram/core';
import {
  BaseRpcContext,
  Server,
  type CustomTransportStrategy,
  type MessageHandler,
} from '@nestjs/microservices';
import type { Kafka } from 'kafkajs';
import { lastValueFrom } from 'rxjs';
import type { AvroRegistry } from './avro-registry';
import { DeadLetterWriter } from './dead-letter-writer';
import type { Delivered } from './delivered-event';
import { ReliableConsumer } from './reliable-consumer';
import type { TopicCodec } from './topic-codec';

/** What an `@EventPattern(topic)` handler gets besides the typed event: where it came from. */
export class KafkaAvroContext extends BaseRpcContext<[Delivered<unknown>]> {
  get delivered(): Delivered<unknown> {
    return this.args[0];
  }
}

export interface KafkaAvroTransportOptions {
  kafka: Kafka;
  registry: AvroRegistry;
  service: string;
  groupId: string;
  codecs: TopicCodec<unknown>[];
  retry: BackoffOptions;
}

/**
 * A custom Nest transport rather than the built-in Kafka one: the built-in transport commits after
 * every handler call whatever happened and has no dead-letter or pause-and-retry semantics, and
 * its deserializer cannot await the Schema Registry per message in order. This one routes each
 * `@EventPattern(topic)` handler through ReliableConsumer, so handlers receive validated, typed
 * events and the offset moves only after they succeeded.
 */
export class KafkaAvroTransport extends Server implements CustomTransportStrategy {
  private consumer?: ReliableConsumer;
  private deadLetters?: DeadLetterWriter;

  constructor(private readonly options: KafkaAvroTransportOptions) {
    super();
  }

  async listen(callback: (...optionalParams: unknown[]) => void): Promise<void> {
    const { kafka, registry, service, groupId, retry } = this.options;
    this.deadLetters = new DeadLetterWriter(kafka, service);
    await this.deadLetters.connect();
    this.consumer = new ReliableConsumer(kafka, registry, this.deadLetters, { groupId, retry });
    for (const [pattern, handler] of this.messageHandlers) {
      this.consumer.subscribe(this.codecFor(pattern), (items) => this.dispatch(handler, items));
    }
    await this.consumer.start();
    callback();
  }

  async close(): Promise<void> {
    await this.consumer?.stop();
    await this.deadLetters?.disconnect();
  }

  on(): never {
    throw new Error('KafkaAvroTransport has no events to listen to');
  }

  unwrap<T>(): T {
    return this.consumer as T;
  }

  private codecFor(pattern: string): TopicCodec<unknown> {
    const codec = this.options.codecs.find((c) => c.topic === pattern);
    if (!codec) {
      throw new MisconfigurationError(
        `@EventPattern('${pattern}') has no codec: add the topic's codec to KafkaAvroTransport options`,
      );
    }
    return codec;
  }

  /** One event at a time, in partition order; a thrown error is classified by the consumer. */
  private async dispatch(handler: MessageHandler, items: Delivered<unknown>[]): Promise<void> {
    for (const item of items) {
      const result: unknown = await handler(item.event, new KafkaAvroContext([item]));
      await lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
    }
  }
}
