export * from './errors/engram-error';
export * from './reliability/retry-policy';
