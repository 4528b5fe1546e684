import { Global, Module, type DynamicModule } from '@nestjs/common';
import { loadConfig, type EngramConfig } from './engram-config';

/** The injection token of the process's EngramConfig (inject with `@Inject(ENGRAM_CONFIG)`). */
export const ENGRAM_CONFIG = Symbol('ENGRAM_CONFIG');

/**
 * Provides ENGRAM_CONFIG to every module: imported as is, the environment's (and ENGRAM_CONFIG_FILE's),
 * read once (loadConfig); `ConfigModule.forRoot(config)` provides a given one (tests).
 */
@Global()
@Module({
  providers: [{ provide: ENGRAM_CONFIG, useFactory: loadConfig }],
  exports: [ENGRAM_CONFIG],
})
export class ConfigModule {
  static forRoot(config?: EngramConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: ENGRAM_CONFIG, useFactory: () => config ?? loadConfig() }],
      exports: [ENGRAM_CONFIG],
    };
  }
}
