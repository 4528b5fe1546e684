// The retrieval app's test helpers for other apps (`@engram/app-retrieval/testing`): the records
// and the corpus the recall RPC tests index.
export { fileGotcha, memoryRecord, PROJECT, TENANT } from './records';
export { AUTH_FILE, CURRENT_SESSION, indexRpcCorpus, rpcCorpus } from './rpc-corpus';
export { REVIEW_QUEUE } from './rpc-corpus';
export { startEmbeddedRpcServer, type EmbeddedRpcServer } from './embedded-rpc-server';
export { RPC_TOKENS } from './recall-rpcs.suite';
