// The retrieval app's public entry (`@engram/app-retrieval`): what other apps (the `engram` CLI)
// may use; test helpers are in `@engram/app-retrieval/testing`. Other apps import retrieval only
// through these files (dependency-cruiser rule apps-cross-import-public-entry); the modules of this
// app never import them (that would be a cycle).
export { recallGrpcClient } from './recall-grpc-client';
export { episodeItem, memoryItem, scoreMessage, turnItem } from './recall-proto';
export { hydeClientOf, type RecallStack } from './recall-stack';
export { RecallServerModule } from './recall.module';
export {
  createRecallStack,
  DEFAULT_RECALL_GRPC_URL,
  serveRecallGrpc,
  startRecallServer,
} from './recall.runtime';
export {
  RecallService,
  type RecallAnswer,
  type RecallHit,
  type RecallTimings,
} from './recall.service';
export { publishTombstonesTo } from './record-publisher';
export { RetrievalIndexer, type ToolCallIndex } from './retrieval-indexer';
export { prefixedRetrievalTopics } from './retrieval-topics';
export {
  createEmbeddedRecallStack,
  embeddedEmbedder,
  LEXICAL_ONLY_EMBEDDER,
  startEmbeddedRetrieval,
  type EmbeddedRetrieval,
} from './retrieval.embedded';
export { RetrievalModule } from './retrieval.module';
export { DEFAULT_INDEXER_GROUP_ID } from './retrieval.runtime';
