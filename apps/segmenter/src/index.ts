// The segmenter's public entry (`@engram/app-segmenter`): what other apps (the `engram` CLI) may
// use. Other apps import the segmenter only through this file (dependency-cruiser rule
// apps-cross-import-public-entry); the modules of this app never import it (that would be a cycle).
export { threadLinkRecord } from './episode-records';
export {
  continuityAssessorOf,
  prefixedTopics,
  promptEmbedderOf,
  SegmenterModule,
  SegmenterService,
} from './segmenter.module';
export {
  DEFAULT_SEGMENTER_GROUP,
  ensureSegmenterTopics,
  segmenterCodecs,
  startSegmenter,
  type SegmenterOptions,
  type RunningSegmenter,
} from './segmenter.topology';
export { toLinkDecisionRecord } from './thread-linker';
