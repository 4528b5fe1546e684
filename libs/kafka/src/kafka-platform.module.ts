import { ConfigModule, ENGRAM_CONFIG, type EngramConfig } from '@engram/config';
import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { KafkaStreamPlatform } from './kafka-stream-platform';

/**
 * The process's one Kafka platform (one admin connection, the contract schemas registered once):
 * every service module of `engram start --distributed` acquires it, and releases it once its
 * processors have stopped; the last release closes it, whatever order Nest shuts modules down in.
 */
@Injectable()
export class SharedKafkaPlatform implements OnApplicationShutdown {
  private connecting?: Promise<KafkaStreamPlatform>;
  private holders = 0;

  constructor(@Inject(ENGRAM_CONFIG) private readonly config: EngramConfig) {}

  acquire(): Promise<KafkaStreamPlatform> {
    this.holders += 1;
    if (!this.connecting) {
      const { kafka, schemaRegistry } = this.config;
      this.connecting = KafkaStreamPlatform.connect({
        brokers: kafka.brokers,
        registryUrl: schemaRegistry.url,
        clientId: kafka.clientId,
        sessionTimeoutMs: kafka.sessionTimeoutMs,
      });
      // A failed connection is not kept: the next service start tries again.
      this.connecting.catch(() => (this.connecting = undefined));
    }
    return this.connecting;
  }

  async release(): Promise<void> {
    this.holders = Math.max(0, this.holders - 1);
    if (this.holders === 0) await this.close();
  }

  /** A service that never released (its start failed) does not keep the connection open. */
  async onApplicationShutdown(): Promise<void> {
    if (this.holders === 0) await this.close();
  }

  private async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = undefined;
    const platform = await connecting?.catch(() => undefined);
    await platform?.close();
  }
}

/** Nest keeps one instance of a module per application, so every importer shares the platform. */
@Module({
  imports: [ConfigModule],
  providers: [SharedKafkaPlatform],
  exports: [SharedKafkaPlatform],
})
export class KafkaPlatformModule {}
