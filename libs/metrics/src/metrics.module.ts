import { ConfigModule, ENGRAM_CONFIG, type EngramConfig } from '@engram/config';
import {
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { serveMetrics, type MetricsServer } from './metrics-server';

/** Serves /metrics, /healthz and /readyz (EngramConfig.metrics) for the life of the Nest app. */
@Injectable()
export class MetricsServerService implements OnModuleInit, OnApplicationShutdown {
  private server: MetricsServer | null = null;

  constructor(@Inject(ENGRAM_CONFIG) private readonly config: EngramConfig) {}

  /** Before the services start (they start at bootstrap), so /healthz answers while they do. */
  async onModuleInit(): Promise<void> {
    this.server = await serveMetrics(this.config.metrics);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.stop();
  }
}

/** Import once per process (a service's main.ts, `engram start --distributed`). */
@Module({ imports: [ConfigModule], providers: [MetricsServerService] })
export class MetricsModule {}
