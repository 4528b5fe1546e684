import type { ToolCallObserved } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import type { ObserverSettings } from './observer-settings';
import type { ToolKind } from './tool-kinds';

/** The fields of a ToolCallObserved (`agent.tool-calls.v1`) the detector reads. */
export type ObservedToolCall = Pick<
  ToolCallObserved,
  | 'eventId'
  | 'sessionId'
  | 'timestamp'
  | 'promptId'
  | 'stepIndex'
  | 'toolName'
  | 'filePaths'
  | 'command'
  | 'argsJson'
  | 'outcome'
  | 'errorMessage'
  | 'tokensUsed'
  | 'plannedSteps'
  | 'resultSummary'
>;

/** One call as the detection steps see it: paths already normalised and de-duplicated. */
export interface CallContext {
  call: ObservedToolCall;
  kind: ToolKind;
  files: string[];
  settings: ObserverSettings;
}

/** A signal id: the session, the signal type, its natural key and the completing event. */
export function signalIdOf(
  context: CallContext,
  type: string,
  ...key: readonly (string | number)[]
): string {
  return idOf(context.call.sessionId, type, context.call.eventId, ...key);
}

/** The fields every signal takes from the call that completed it. */
export function signalBase(context: CallContext, signalId: string, eventIds: string[]) {
  return {
    signalId,
    sessionId: context.call.sessionId,
    at: context.call.timestamp,
    stepIndex: context.call.stepIndex,
    promptId: context.call.promptId,
    eventIds,
  };
}
