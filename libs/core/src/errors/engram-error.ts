// The error classes live in libs/errors (@engram/errors), below both the core and the contracts,
// which need them without importing each other; re-exported here so core keeps one entry point.
export * from '@engram/errors';
