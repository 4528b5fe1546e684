// `@engram/app-retrieval/embedded`: what `engram hook` needs of retrieval (the recall stack on the
// SQLite store, the review queue), without the NestJS modules and the gRPC server of the app's
// public entry — about 100 ms less on every hook. Other apps import it only through its alias.
export { LEXICAL_ONLY_EMBEDDER } from './retrieval-embedders';
export { createRecallStack } from './retrieval-backend';
export { sqliteBackend } from './sqlite-backend';
export { ReviewQueueService } from './review-queue.service';
