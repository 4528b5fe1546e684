export * from './friction-types';
export * from './friction-settings';
export {
  frictionConfidence,
  frictionCost,
  type FailureGroupMeasures,
  type MeasuredFriction,
} from './friction-findings';
export * from './recurring-failures';
export * from './repeated-corrections';
export * from './tool-misuse';
export * from './stale-memories';
export * from './config-drift-classify';
export * from './config-drift';
export * from './missing-skills-steps';
export * from './missing-skills';
export * from './friction-report';
export { renderFrictionMarkdown, scopeLabel, windowLabel } from './render-markdown';
export { renderFrictionHtml } from './render-html';
export * from './friction-review';
export * from './friction-recurrence';
export { recurrenceMarkdown, recurrenceHtml, withRecurrenceHtml } from './render-recurrence';
export * from './friction-patch';
