export { NO_MEMORY_DETAILS, type MemoryDetails } from './memory-defaults';
export * from './staleness';
export * from './supersession';
export * from './memory-history';
export * from './pruning';
export * from './scheduled-pruning';
export * from './review-queue';
export * from './confidence-propagation';
