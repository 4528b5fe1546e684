import type { E2eObservationType } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { pushBounded, type BrowserFailure, type DetectorState } from './detector-state';
import type { CallContext } from './observed-call';
import type { E2eObservationSignal } from './signals';
import { detectTestSequence } from './test-sequence-detection';

/**
 * E2E observations from a QA agent's browser automation MCP tools (seed 002 §9, SPEC §5). The
 * seed has a model classify each result (precondition, timing, ui_behavior, test_sequence,
 * mcp_gotcha, or nothing); the observer makes no model calls, so this is the deterministic
 * version, from what the events carry (tool, arguments, outcome, result text):
 * - an action that failed, then succeeded after other actions → precondition (those came first);
 * - one that failed on a wait-like error (timeout, not visible, animating…) or succeeded on a
 *   retry or after a wait → timing; an explicit wait with a target → timing;
 * - one that failed otherwise and never succeeded → mcp_gotcha;
 * - a success whose result reports an error, a dialog or a disabled element → ui_behavior.
 * - a run of successful actions that ends in a state check → test_sequence (test-sequence-detection.ts).
 * Other routine successes are the seed's "not worth remembering": no signal.
 */

/** Servers (`mcp__<server>__…`) that automate a browser or an app's UI. */
const BROWSER_SERVERS = /playwright|puppeteer|browser|chrom|electron|selenium|webdriver|cypress/i;
/** Tools that do, on any server (Playwright's `browser_*`, the seed's Electron MCP tools). */
const BROWSER_TOOLS =
  /^(browser_|take_screenshot$|click_by_text$|fill_input$|get_page_structure$|send_keyboard_shortcut$)/;

/** The action a tool performs, by its name (first match wins: `press_key` is a key, not a click). */
const ACTIONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/wait/, 'wait'],
  [/assert|expect|verify/, 'assert'],
  [/navigate|goto|open_url|open_page/, 'navigate'],
  [/key|press|shortcut/, 'key'],
  [/click|tap/, 'click'],
  [/fill|type|input/, 'fill'],
  [/select/, 'select'],
  [/hover/, 'hover'],
  [/screenshot|snapshot|structure|get_page|console|network/, 'inspect'],
  [/eval/, 'evaluate'],
];

/** Actions that only look or wait: never the step an action needed first. */
const PASSIVE_ACTIONS = new Set(['wait', 'inspect', 'assert']);

/** Arguments naming what an action aims at, most readable first (`ref` is Playwright's id). */
const TARGET_ARGS = ['element', 'text', 'selector', 'label', 'url', 'key', 'name', 'ref'];
/** A fill's `text` is what was typed (a password, say): never its target, never stored. */
const FILL_TARGET_ARGS = TARGET_ARGS.filter((name) => name !== 'text');

const WAIT_LIKE_ERROR =
  /timed? ?out|exceeded|waiting for|not (yet )?(visible|stable|enabled|attached|ready|interactable)|detached|animat|intercepts pointer|still loading/i;
const NOTABLE_RESULT =
  /console[^\n]*\b(error|warning)\b|\[error\]|uncaught|exception|dialog|alert|is disabled|not found|no such element/i;
const PAGE_URL = /Page URL:\s*(\S+)/;

const MAX_TEXT = 160;
const MAX_BEFORE = 5;

export interface BrowserCall {
  mcpTool: string;
  action: string;
  target: string | null;
  /** `action target`, to tell a retry of the same action from another one. */
  key: string;
}

/** The browser tool a call used, or null when it is not one. */
export function browserCallOf(toolName: string, argsJson: string): BrowserCall | null {
  const match = /^mcp__(.+?)__(.+)$/.exec(toolName);
  if (match === null) return null;
  const [, server, tool] = match;
  if (!BROWSER_SERVERS.test(server) && !BROWSER_TOOLS.test(tool)) return null;
  const bare = tool.replace(/^(browser_|puppeteer_|playwright_)/, '');
  const action = ACTIONS.find(([pattern]) => pattern.test(bare))?.[1] ?? bare;
  const target = targetOf(argsJson, action === 'fill' ? FILL_TARGET_ARGS : TARGET_ARGS);
  return { mcpTool: toolName, action, target, key: `${action}\u0000${target ?? ''}` };
}

/** The signals a browser tool call completes (none for other calls). */
export function detectE2eObservation(
  state: DetectorState,
  context: CallContext,
): E2eObservationSignal[] {
  const { call } = context;
  const browserCall = browserCallOf(call.toolName, call.argsJson);
  if (browserCall === null) return [];
  const browser = (state.browser ??= { page: null, failed: null });
  const signals: E2eObservationSignal[] = [];
  if (call.outcome === 'error') {
    // A new failure leaves the previous one unresolved: it is what it looked like.
    if (browser.failed !== null) signals.push(unresolvedFailure(state.sessionId, browser.failed));
    // A failure breaks a sequence: what follows starts from wherever the retry left the page.
    browser.run = [];
    const message = firstLine(call.errorMessage ?? '') || 'failed';
    browser.failed = {
      ...browserCall,
      page: browser.page,
      message,
      files: context.files,
      sessionId: call.sessionId,
      eventId: call.eventId,
      at: call.timestamp,
      stepIndex: call.stepIndex,
      promptId: call.promptId,
      since: [],
    };
    return signals;
  }
  const observe = (type: E2eObservationType, outcome: string, before: string[] = []) =>
    signals.push(observation(context, browserCall, browser.page, type, outcome, before));
  const failed = browser.failed;
  if (failed !== null && failed.key === browserCall.key) {
    const needed = failed.since.filter((step) => !PASSIVE_ACTIONS.has(step.split(' ')[0]));
    if (needed.length > 0) {
      observe(
        'precondition',
        `failed first (${failed.message}); worked after ${needed.join(', ')}`,
        needed,
      );
    } else {
      const waited = failed.since.length > 0 ? 'after a wait' : 'on a retry';
      observe('timing', `failed first (${failed.message}); worked ${waited}`);
    }
    browser.failed = null;
  } else if (failed !== null) {
    pushBounded(failed.since, describeBrowserCall(browserCall), MAX_BEFORE);
  }
  const pageBefore = browser.page;
  browser.page = pageAfter(browserCall, call.resultSummary ?? null) ?? browser.page;
  signals.push(
    ...detectTestSequence(browser, context, {
      ...browserCall,
      described: describeBrowserCall(browserCall),
      pageBefore,
    }),
  );
  const result = call.resultSummary ?? '';
  if (browserCall.action === 'wait' && browserCall.target !== null) {
    observe('timing', `had to wait for ${quoted(browserCall.target)}`);
  } else if (NOTABLE_RESULT.test(result)) {
    const line = result.split('\n').find((l) => NOTABLE_RESULT.test(l)) ?? result;
    observe('ui_behavior', clip(line.trim()));
  }
  return signals;
}

/** At the session's end: a browser failure never resolved is a gotcha (or a timing issue). */
export function finishE2eObservation(state: DetectorState): E2eObservationSignal[] {
  const failed = state.browser?.failed ?? null;
  if (failed === null) return [];
  state.browser!.failed = null;
  return [unresolvedFailure(state.sessionId, failed)];
}

function unresolvedFailure(sessionId: string, failed: BrowserFailure): E2eObservationSignal {
  const type: E2eObservationType = WAIT_LIKE_ERROR.test(failed.message) ? 'timing' : 'mcp_gotcha';
  return {
    signalId: idOf(sessionId, 'e2e_observation', failed.eventId, type, failed.key),
    sessionId,
    at: failed.at,
    stepIndex: failed.stepIndex,
    promptId: failed.promptId,
    eventIds: [failed.eventId],
    type: 'e2e_observation',
    observationType: type,
    mcpTool: failed.mcpTool,
    action: failed.action,
    target: failed.target,
    page: failed.page,
    outcome: `failed: ${failed.message}`,
    before: [],
    files: failed.files,
  };
}

function observation(
  context: CallContext,
  browserCall: BrowserCall,
  page: string | null,
  type: E2eObservationType,
  outcome: string,
  before: string[],
): E2eObservationSignal {
  const { call } = context;
  return {
    signalId: idOf(call.sessionId, 'e2e_observation', call.eventId, type, browserCall.key),
    sessionId: call.sessionId,
    at: call.timestamp,
    stepIndex: call.stepIndex,
    promptId: call.promptId,
    eventIds: [call.eventId],
    type: 'e2e_observation',
    observationType: type,
    mcpTool: browserCall.mcpTool,
    action: browserCall.action,
    target: browserCall.target,
    page,
    outcome,
    before,
    files: context.files,
  };
}

/** The page a successful call left the browser on: the result's `Page URL`, or where it went. */
function pageAfter(browserCall: BrowserCall, result: string | null): string | null {
  const named = result === null ? null : (PAGE_URL.exec(result)?.[1] ?? null);
  const url = named ?? (browserCall.action === 'navigate' ? browserCall.target : null);
  if (url === null || !/^[a-z][a-z0-9+.-]*:/i.test(url)) return null;
  return url.split(/[?#]/)[0];
}

function targetOf(argsJson: string, names: readonly string[]): string | null {
  let args: unknown;
  try {
    args = JSON.parse(argsJson);
  } catch {
    return null;
  }
  if (typeof args !== 'object' || args === null) return null;
  const record = args as Record<string, unknown>;
  for (const name of names) {
    const value = record[name];
    if (typeof value === 'string' && value.trim() !== '') return clip(value.trim());
  }
  return null;
}

/** `click "Save button"`: the action and what it aimed at (a fill's typed text is never one). */
export function describeBrowserCall(browserCall: BrowserCall): string {
  return browserCall.target === null
    ? browserCall.action
    : `${browserCall.action} ${quoted(browserCall.target)}`;
}

function quoted(text: string): string {
  return `"${text}"`;
}

function firstLine(text: string): string {
  return clip(text.trim().split('\n')[0].trim());
}

function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`;
}
