export * from './neo4j-client';
export * from './schema-setup';
export * from './observer-graph.types';
export * from './observer-graph.cypher';
export * from './graph-writer-driver';
export * from './observer-graph-writer';
export * from './co-access-neighbours';
export * from './observer-graph-connection';
