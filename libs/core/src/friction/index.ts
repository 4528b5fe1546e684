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
export * from './friction-report';
export { renderFrictionMarkdown, scopeLabel, windowLabel } from './render-markdown';
export { renderFrictionHtml } from './render-html';
export * from './friction-review';
export * from './friction-recurrence';
export { recurrenceMarkdown, recurrenceHtml, withRecurrenceHtml } from './render-recurrence';
export * from './friction-patch';
