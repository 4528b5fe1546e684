export * from './engram-config';
export * from './grpc-tokens';
