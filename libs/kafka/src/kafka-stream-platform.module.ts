import { STREAM_PLATFORM } from '@engram/config';
import { Global, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { KafkaPlatformModule, SharedKafkaPlatform } from './kafka-platform.module';
import type { KafkaStreamPlatform } from './kafka-stream-platform';

/**
 * The service modules' hold on the process's Kafka platform: acquired when the application
 * context is created, released on application shutdown — after every service stopped its
 * processors, which they do before (beforeApplicationShutdown).
 */
@Injectable()
export class KafkaStreamPlatformLease implements OnApplicationShutdown {
  private held = false;

  constructor(private readonly platforms: SharedKafkaPlatform) {}

  async acquire(): Promise<KafkaStreamPlatform> {
    // (acquire counts a holder even when it fails to connect: released on shutdown then too)
    this.held = true;
    return this.platforms.acquire();
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    await this.platforms.release();
  }
}

/** Distributed mode's STREAM_PLATFORM: Kafka and the Schema Registry (EngramConfig.kafka). */
@Global()
@Module({
  imports: [KafkaPlatformModule],
  providers: [
    KafkaStreamPlatformLease,
    {
      provide: STREAM_PLATFORM,
      useFactory: (lease: KafkaStreamPlatformLease) => lease.acquire(),
      inject: [KafkaStreamPlatformLease],
    },
  ],
  exports: [STREAM_PLATFORM],
})
export class KafkaStreamPlatformModule {}
