// The retrieval app's public entry (`@engram/app-retrieval`): what other apps (the `engram` CLI)
// may use; test helpers are in `@engram/app-retrieval/testing`. Other apps import retrieval only
// through these files (dependency-cruiser rule apps-cross-import-public-entry); the modules of this
// app never import them (that would be a cycle).
export {
  elasticsearchBackend,
  openElasticsearchIndexing,
  openElasticsearchRecall,
  type ElasticsearchIndexing,
  type ElasticsearchRecall,
} from './elasticsearch-retrieval';
export { recallGrpcClient } from './recall-grpc-client';
export { episodeItem, memoryItem, replacedMessages, scoreMessage, turnItem } from './recall-proto';
export { hydeClientOf, type RecallStack } from './recall-stack';
export { RecallServerModule } from './recall.module';
export { DEFAULT_RECALL_GRPC_URL, serveRecallGrpc, startRecallServer } from './recall-server';
export {
  RecallService,
  type RecallAnswer,
  type RecallHit,
  type RecallTimings,
} from './recall.service';
export { publishTombstonesTo } from './record-publisher';
export { createRecallStack, type RetrievalBackend } from './retrieval-backend';
export { embeddedEmbedder, LEXICAL_ONLY_EMBEDDER } from './retrieval-embedders';
export { sqliteBackend } from './sqlite-backend';
export { RetrievalIndexer, type ToolCallIndex } from './retrieval-indexer';
export { prefixedRetrievalTopics } from './retrieval-topics';
export { RetrievalIndexerService, RetrievalModule } from './retrieval.module';
export { ElasticsearchBackendModule } from './elasticsearch-backend.module';
export {
  DEFAULT_INDEXER_GROUP_ID,
  startRetrieval,
  startRetrievalWithRecall,
  type RetrievalWithRecall,
  type RunningRetrieval,
} from './retrieval.topology';
