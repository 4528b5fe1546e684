// The distiller's public entry (`@engram/app-distiller`): what other apps (the `engram` CLI) may
// use; test helpers are in `@engram/app-distiller/testing`. Other apps import the distiller only
// through these files (dependency-cruiser rule apps-cross-import-public-entry); the modules of this
// app never import them (that would be a cycle).
export { type DistillerLlm } from './distiller-llm';
export { DistillerModule, DistillerService } from './distiller.module';
export {
  distillerCodecs,
  ensureDistillerTopics,
  prefixedDistillerTopics,
} from './distiller-topics';
export {
  DEFAULT_DISTILLER_GROUP,
  startDistiller,
  type DistillerOptions,
  type RunningDistiller,
} from './distiller.topology';
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
export { startDistillerReview, startReviewServer, type ReviewServer } from './review/review.server';
