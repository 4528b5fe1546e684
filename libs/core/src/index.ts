export * from './errors/engram-error';
export * from './ids/deterministic-id';
export * from './math/vectors';
export * from './reliability/retry-policy';
export * from './segmentation';
export * from './redaction';
export * from './retrieval';
export * from './distillation';
