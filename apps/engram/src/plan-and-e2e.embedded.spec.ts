// Issue #20, the two memory types no event could produce, on embedded Engram (`engram start`:
// the SQLite log and the services, no servers). Claude Code hook payloads go through the hook's
// own mapping (as `engram hook` and `engram import` send them) into the log:
// - sessions whose agent wrote a plan (TodoWrite) and then grew it → task_calibration once three
//   sessions of a module had a plan; the same sessions without TodoWrite → none; sessions whose
//   orchestrator told the planned steps on TaskClassified, without TodoWrite → task_calibration;
// - a QA session whose browser MCP tool failed until another action came first →
//   e2e_observation (precondition, page, tool); the same session without the MCP tools → none.
import type { Memory, Typed } from '@engram/contracts';
import {
  idOf,
  mapClaudeCodeHook,
  newHookSessionState,
  type ClaudeCodeHookPayload,
  type HookProject,
} from '@engram/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLexicalEmbedded, type LexicalEmbedded } from './testing/embedded-lexical';
import { pollUntil as until } from './testing/poll-until';

const ROOT = '/home/dev/shop';
const PROJECT: HookProject = {
  tenantId: 'acme',
  projectId: 'shop',
  projectRoot: ROOT,
  agentId: 'claude-code',
  userId: null,
  gitBranch: null,
  gitHeadSha: null,
};
const START = Date.now() - 60 * 60 * 1000;

type Step = Partial<ClaudeCodeHookPayload> & { hook_event_name: string };

const todos = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    content: `step ${i + 1}`,
    status: 'pending',
    activeForm: `doing ${i + 1}`,
  }));
const todoWrite = (n: number): Step => ({
  hook_event_name: 'PostToolUse',
  tool_name: 'TodoWrite',
  tool_input: { todos: todos(n) },
  tool_response: { newTodos: todos(n) },
});
const fileTool = (tool: 'Read' | 'Edit', file: string): Step => ({
  hook_event_name: 'PostToolUse',
  tool_name: tool,
  tool_input: { file_path: `${ROOT}/${file}`, old_string: 'a', new_string: 'b' },
  tool_response: {},
});
const browser = (
  tool: string,
  input: object,
  outcome: { result?: string; error?: string },
): Step =>
  outcome.error === undefined
    ? {
        hook_event_name: 'PostToolUse',
        tool_name: `mcp__playwright__browser_${tool}`,
        tool_input: input,
        tool_response: [{ type: 'text', text: outcome.result ?? 'done' }],
      }
    : {
        hook_event_name: 'PostToolUseFailure',
        tool_name: `mcp__playwright__browser_${tool}`,
        tool_input: input,
        error: outcome.error,
      };

/** A whole Claude Code session through the hook mapping: its events, in order. */
function hookSession(sessionId: string, prompt: string, steps: Step[], startAt: number): Typed[] {
  let state = newHookSessionState();
  const events: Typed[] = [];
  const all: Step[] = [
    { hook_event_name: 'SessionStart', source: 'startup' },
    { hook_event_name: 'UserPromptSubmit', prompt },
    ...steps,
    { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
  ];
  all.forEach((step, i) => {
    const payload = {
      session_id: sessionId,
      transcript_path: `/tmp/${sessionId}.jsonl`,
      cwd: ROOT,
      tool_use_id: step.tool_name ? `${sessionId}-tool-${i}` : undefined,
      ...step,
    } as ClaudeCodeHookPayload;
    const mapping = mapClaudeCodeHook(payload, state, PROJECT, startAt + i * 1_000);
    state = mapping.state;
    events.push(...mapping.events);
  });
  return events;
}

/** Sessions in src/cart: a plan of 4 steps that grew to `grewTo` (no TodoWrite: no plan). */
function cartSession(id: string, grewTo: number | null, at: number): Typed[] {
  const work = [
    fileTool('Read', 'src/cart/total.ts'),
    fileTool('Edit', 'src/cart/total.ts'),
    fileTool('Read', 'src/cart/discount.ts'),
  ];
  const steps = grewTo === null ? work : [todoWrite(4), ...work, todoWrite(grewTo)];
  return hookSession(id, 'Apply the discount before tax in the cart total', steps, at);
}

/**
 * A session in src/billing whose task an orchestrator classified with a plan of `planned` steps
 * (TaskClassified on the lifecycle topic, as an orchestrator publishes it); no TodoWrite.
 */
function orchestratedSession(id: string, planned: number, at: number): Typed[] {
  const work = [
    fileTool('Read', 'src/billing/invoice.ts'),
    fileTool('Edit', 'src/billing/invoice.ts'),
    fileTool('Read', 'src/billing/tax.ts'),
  ];
  const [started, ...rest] = hookSession(id, 'Add the tax line to the invoice', work, at);
  const classified: Typed<'TaskClassified'> = {
    type: 'TaskClassified',
    eventId: idOf('task-classified', id),
    tenantId: PROJECT.tenantId,
    projectId: PROJECT.projectId,
    sessionId: id,
    agentId: 'orchestrator',
    userId: null,
    timestamp: at + 500,
    schemaVersion: 1,
    complexity: 'standard',
    workUnitRef: null,
    taskDescription: 'Add the tax line to the invoice',
    plannedSteps: planned,
  };
  return [started, classified, ...rest];
}

/** A QA session on the settings page; without MCP tools it only reads the page's code. */
function qaSession(id: string, withBrowser: boolean, at: number): Typed[] {
  const browserSteps: Step[] = [
    browser(
      'navigate',
      { url: 'http://localhost:3000/settings' },
      { result: '- Page URL: http://localhost:3000/settings\n- Page Title: Settings' },
    ),
    browser(
      'click',
      { element: 'Save button', ref: 'e7' },
      { error: 'Element <div class="cookie-banner"> intercepts pointer events' },
    ),
    browser('click', { element: 'Accept cookies', ref: 'e2' }, {}),
    browser('click', { element: 'Save button', ref: 'e7' }, { result: 'Settings saved' }),
    // Only the result (resultSummary) says the page reported an error.
    browser(
      'click',
      { element: 'Delete account', ref: 'e9' },
      {
        result:
          '- Page URL: http://localhost:3000/settings\n- Console: [error] 403 Forbidden /api/account',
      },
    ),
  ];
  const steps = [fileTool('Read', 'src/settings/SettingsPage.tsx')];
  if (withBrowser) steps.push(...browserSteps);
  return hookSession(id, 'Check that saving the settings page works end to end', steps, at);
}

/** A QA session that signs in (typing a password) and checks the page it reached. */
function signInSession(id: string, at: number): Typed[] {
  return hookSession(
    id,
    'Check that signing in lands on the home page',
    [
      browser('navigate', { url: 'http://localhost:3000/login' }, {}),
      browser('type', { element: 'Email textbox', ref: 'e3', text: 'qa@example.com' }, {}),
      browser('type', { ref: 'e4', text: 'hunter2-secret' }, {}),
      browser('click', { element: 'Sign in button', ref: 'e5' }, {}),
      browser('snapshot', {}, { result: '- Page URL: http://localhost:3000/home?welcome=1' }),
    ],
    at,
  );
}

describe('task_calibration and e2e_observation from hook events, embedded (issue #20)', () => {
  let engram: LexicalEmbedded;
  const publish = (events: Typed[]) => engram.publish(events);
  const ofType = (type: Memory['memoryType']) =>
    engram.memories().filter((m) => m.memoryType === type);
  const sessionsEnded = () =>
    Promise.resolve(engram.services.observer.stage.counters.sessionsEnded);

  beforeAll(async () => {
    engram = await startLexicalEmbedded('plan-e2e');
  }, 60_000);

  afterAll(() => engram?.stop());

  it('should write no task_calibration for sessions without a plan, nor e2e without MCP', async () => {
    await publish([
      ...cartSession('unplanned-1', null, START),
      ...cartSession('unplanned-2', null, START + 60_000),
      ...cartSession('unplanned-3', null, START + 120_000),
      ...qaSession('qa-no-browser', false, START + 180_000),
    ]);
    await until(sessionsEnded, (n) => n >= 4, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(ofType('task_calibration')).toEqual([]);
    expect(ofType('e2e_observation')).toEqual([]);
  }, 60_000);

  it('should calibrate src/cart once three sessions planned 4 steps and ended with 6 on average', async () => {
    await publish([
      ...cartSession('planned-1', 5, START + 240_000),
      ...cartSession('planned-2', 6, START + 300_000),
      ...cartSession('planned-3', 7, START + 360_000),
    ]);
    const [calibration] = await until(
      () => Promise.resolve(ofType('task_calibration')),
      (found) => found.length > 0,
      30_000,
    );
    expect(calibration).toMatchObject({
      relatedModules: ['src/cart'],
      source: 'observer_inferred',
      needsReview: true,
      taskCalibration: {
        module: 'src/cart',
        methodology: 'unknown',
        averageActualSteps: 6,
        averagePlannedSteps: 4,
        ratio: 1.5,
        sampleCount: 3,
      },
    });
    expect(calibration.content).toContain('1.50× the planned steps');
  }, 60_000);

  it("should calibrate src/billing from an orchestrator's planned steps, without any TodoWrite", async () => {
    await publish([
      ...orchestratedSession('orchestrated-1', 2, START + 390_000),
      ...orchestratedSession('orchestrated-2', 2, START + 400_000),
      ...orchestratedSession('orchestrated-3', 2, START + 410_000),
    ]);
    const billing = () =>
      ofType('task_calibration').filter((m) => m.taskCalibration?.module === 'src/billing');
    const [calibration] = await until(
      () => Promise.resolve(billing()),
      (found) => found.length > 0,
      30_000,
    );
    // No todo list: the actual steps are the sessions' tool calls (3 each).
    expect(calibration.taskCalibration).toMatchObject({
      averagePlannedSteps: 2,
      averageActualSteps: 3,
      ratio: 1.5,
      sampleCount: 3,
    });
  }, 60_000);

  it('should observe the precondition a QA session met in the browser, and what the page said', async () => {
    await publish(qaSession('qa-browser', true, START + 420_000));
    const found = await until(
      () => Promise.resolve(ofType('e2e_observation')),
      (memories) => memories.length >= 2,
      30_000,
    );
    const kind = (m: Memory) => m.e2eObservation?.observationType;
    expect(found.map(kind).sort()).toEqual(['precondition', 'ui_behavior']);
    const observation = found.find((m) => kind(m) === 'precondition')!;
    const behaviour = found.find((m) => kind(m) === 'ui_behavior')!;
    expect(behaviour.content).toContain('403 Forbidden /api/account');
    expect(observation).toMatchObject({
      source: 'mcp_auto',
      scope: 'global',
      needsReview: true,
      provenanceSessionIds: ['qa-browser'],
      e2eObservation: {
        observationType: 'precondition',
        mcpToolUsed: 'mcp__playwright__browser_click',
        appState: 'http://localhost:3000/settings',
      },
    });
    expect(observation.content).toContain('Before click "Save button"');
    expect(observation.content).toContain('click "Accept cookies"');
  }, 60_000);

  it('should remember the steps a QA session took to reach the page it checked, without what it typed', async () => {
    const sequences = () =>
      ofType('e2e_observation').filter(
        (m) => m.e2eObservation?.observationType === 'test_sequence',
      );
    await publish(signInSession('qa-sign-in-1', START + 480_000));
    const [first] = await until(
      () => Promise.resolve(sequences()),
      (found) => found.length > 0,
      30_000,
    );
    // 0.75, times the observer's unvalidatedConfidenceFactor (0.6): no test run validated the
    // session (the same factor every observer memory of such a session gets).
    expect(first.tags).toContain('unvalidated');
    expect(first).toMatchObject({
      source: 'mcp_auto',
      confidence: 0.45,
      needsReview: true,
      e2eObservation: {
        mcpToolUsed: 'mcp__playwright__browser_snapshot',
        appState: 'http://localhost:3000/home',
      },
    });
    expect(first.content).toBe(
      'To reach http://localhost:3000/home, follow: navigate "http://localhost:3000/login" → ' +
        'fill "Email textbox" → fill "e4" → click "Sign in button".',
    );
    expect(JSON.stringify(engram.memories())).not.toContain('hunter2');
    // The same steps to the same page in another session: the same memory (its natural key is
    // the state and the steps), confirmed — 0.9 instead of 0.75, times the same factor.
    await publish(signInSession('qa-sign-in-2', START + 540_000));
    const [confirmed] = await until(
      () => Promise.resolve(sequences()),
      (found) => found.some((m) => m.sessionId === 'qa-sign-in-2'),
      30_000,
    );
    expect(sequences()).toHaveLength(1);
    expect(confirmed).toMatchObject({
      memoryId: first.memoryId,
      confidence: 0.54,
      provenanceSessionIds: ['qa-sign-in-1', 'qa-sign-in-2'],
    });
  }, 60_000);
});
