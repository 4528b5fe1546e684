export * from './engram-config';
export * from './grpc-tokens';
export * from './settings-sections';
export * from './config.module';
export * from './service-tokens';
