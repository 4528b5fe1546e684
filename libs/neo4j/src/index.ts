export * from './neo4j-client';
export * from './schema-setup';
