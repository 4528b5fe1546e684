export * from './embedded-exactly-once-processor';
export * from './json-event-codec';
export * from './sqlite-event-log';
export * from './sqlite-event-log.adapter';
export * from './sqlite-schema';
export * from './sqlite-observer-graph';
export * from './sqlite-retrieval-store';
