export * from './elasticsearch-client';
export * from './index-setup';
export * from './bulk-writer';
export * from './retrieval-documents';
export * from './retrieval-index-setup';
export * from './retrieval-indices';
export * from './recall-search';
export * from './memory-access-writer';
