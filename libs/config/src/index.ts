export * from './engram-config';
