// The distiller's public entry (`@engram/app-distiller`): what other apps (the `engram` CLI) may
// use; test helpers are in `@engram/app-distiller/testing`. Other apps import the distiller only
// through these files (dependency-cruiser rule apps-cross-import-public-entry); the modules of this
// app never import them (that would be a cycle).
export {
  ensureEmbeddedDistillerTopics,
  startEmbeddedDistiller,
  type EmbeddedDistiller,
} from './distiller.embedded';
export { DistillerModule } from './distiller.module';
export {
  DEFAULT_DISTILLER_GROUP,
  distillerCodecs,
  prefixedDistillerTopics,
} from './distiller.runtime';
export { DEFAULT_DISTILLER_TOPICS, type DistillerSettings } from './distiller.stage';
export {
  ReviewDesk,
  ReviewRequestError,
  type DecisionRequest,
  type ReviewErrorCode,
  type StatusFilter,
} from './review/review-desk';
export { proposalMessage, type ProposalMessage } from './review/review-proto';
export { ReviewGrpcClient } from './review/review.grpc-client';
export { startReviewServer, type ReviewServer } from './review/review.server';
