export * from './elasticsearch-client';
export * from './index-setup';
