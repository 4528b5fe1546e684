export * from './event-log.port';
export * from './compacted-view';
export * from './partitioning';
export * from './stream-stage';
export * from './observer-graph';
export * from './state-json';
export * from './committed-changelog';
export * from './session-pair-facts';
