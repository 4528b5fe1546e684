import { idOf } from '../ids/deterministic-id';
import { pushBounded, type BrowserState } from './detector-state';
import type { CallContext } from './observed-call';
import type { E2eObservationSignal } from './signals';

/**
 * test_sequence (seed 002 §9: "to reach state S, follow steps A→B→C"), deterministically: a run
 * of at least MIN_STEPS successful browser actions that ends in a state check — a snapshot or
 * screenshot (the page reached), an assertion or a wait for a text (the text seen) — is one
 * sequence. The steps name the action and its target only (`fill "Password textbox"`): a fill's
 * typed value is never kept. A failure breaks the run (e2e-observation-detection.ts resets it);
 * other tools in between (the agent reading code) do not. A check after fewer steps leaves the
 * run going: agents look at the page after nearly every action, and a check per step would
 * otherwise never let a sequence grow.
 */

/** Actions that move the app towards a state (the ones ACTIONS names; waits and looks do not). */
const SEQUENCE_ACTIONS = new Set(['navigate', 'click', 'fill', 'select', 'key', 'hover']);
/** Looks at the page that say which state was reached (console or network logs do not). */
const PAGE_CHECK_TOOL = /snapshot|screenshot/;
export const MIN_SEQUENCE_STEPS = 3;
/** A longer run keeps its latest steps: the ones nearest the state reached. */
export const MAX_SEQUENCE_STEPS = 8;

/** A browser call as e2e-observation-detection.ts names it (its BrowserCall, and more). */
export interface SequenceCall {
  mcpTool: string;
  /** navigate, click, fill, … (ACTIONS there). */
  action: string;
  target: string | null;
  /** `click "Save button"` (describeBrowserCall). */
  described: string;
  /** The page before this call. */
  pageBefore: string | null;
}

/** The test_sequence a successful browser call completes, if any (and the run it extends). */
export function detectTestSequence(
  browser: BrowserState,
  context: CallContext,
  call: SequenceCall,
): E2eObservationSignal[] {
  const run = (browser.run ??= []);
  if (SEQUENCE_ACTIONS.has(call.action)) {
    pushBounded(run, { step: call.described, from: call.pageBefore }, MAX_SEQUENCE_STEPS);
    return [];
  }
  const assertedText = checkedTextOf(call, context.call.toolName);
  const isCheck =
    call.action === 'assert' ||
    assertedText !== null ||
    PAGE_CHECK_TOOL.test(context.call.toolName);
  if (!isCheck || run.length < MIN_SEQUENCE_STEPS) return [];
  browser.run = [];
  // A state without a page or a text names nothing to reach: no sequence, but the run ends.
  if (browser.page === null && assertedText === null) return [];
  const steps = run.map((r) => r.step);
  const start = run[0].from;
  const before = start !== null && !steps[0].startsWith('navigate ') ? [`start at ${start}`] : [];
  const state = reachedState(browser.page, assertedText);
  const { call: toolCall } = context;
  return [
    {
      signalId: idOf(toolCall.sessionId, 'e2e_observation', toolCall.eventId, 'test_sequence'),
      sessionId: toolCall.sessionId,
      at: toolCall.timestamp,
      stepIndex: toolCall.stepIndex,
      promptId: toolCall.promptId,
      eventIds: [toolCall.eventId],
      type: 'e2e_observation',
      observationType: 'test_sequence',
      mcpTool: call.mcpTool,
      action: call.action,
      target: assertedText,
      page: browser.page,
      outcome: `reached ${state}`,
      before: [...before, ...steps],
      files: context.files,
    },
  ];
}

/** `"Welcome back" on https://app/home`, or the page alone, or the text alone. */
export function reachedState(page: string | null, text: string | null): string {
  const shown = text === null ? null : `"${text}"`;
  if (shown !== null && page !== null) return `${shown} on ${page}`;
  return shown ?? page ?? 'the state checked';
}

/** The text an assertion or a wait checked for (a wait for a time checks nothing). */
function checkedTextOf(call: SequenceCall, toolName: string): string | null {
  if (call.action !== 'assert' && call.action !== 'wait') return null;
  if (call.target === null || PAGE_CHECK_TOOL.test(toolName)) return null;
  return call.target;
}
