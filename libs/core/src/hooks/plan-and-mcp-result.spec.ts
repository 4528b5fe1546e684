import type { Typed } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { charsCut, EVENT_TEXT_CAPS } from '../redaction';
import {
  mapClaudeCodeHook,
  newHookSessionState,
  type ClaudeCodeHookPayload,
  type HookProject,
} from './claude-code-hooks';
import { ClaudeTranscriptReader, mapTranscriptSession } from './claude-transcript';
import { CodexSessionReader, mapCodexSession } from './codex-session';
import { mcpResultSummary, plannedStepsOf } from './plan-and-mcp-result';

const SESSION = '3c9e1f7a-2b4d-4c6e-8f0a-1b2c3d4e5f60';
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
const TOKEN = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
const TODOS = [
  { content: 'Reproduce the login timeout', status: 'completed', activeForm: 'Reproducing' },
  { content: 'Fix the token refresh', status: 'in_progress', activeForm: 'Fixing' },
  { content: 'Run the auth tests', status: 'pending', activeForm: 'Running' },
];
// Playwright MCP's answer to browser_click: text blocks with the page it ended on.
const CLICK_RESPONSE = [
  {
    type: 'text',
    text: `- Ran Playwright code: await page.getByRole('button', { name: 'Sign in' }).click();\n- Page URL: http://localhost:3000/dashboard\n- Page Title: Dashboard\n- Console: Authorization: Bearer ${TOKEN}`,
  },
];

function toolCall(payload: Partial<ClaudeCodeHookPayload>): Typed<'ToolCallObserved'> {
  const mapping = mapClaudeCodeHook(
    {
      session_id: SESSION,
      transcript_path: '/tmp/t.jsonl',
      cwd: ROOT,
      hook_event_name: 'PostToolUse',
      tool_use_id: 'toolu_1',
      ...payload,
    },
    newHookSessionState(),
    PROJECT,
    1_700_000_000_000,
  );
  expect(mapping.events).toHaveLength(1);
  return mapping.events[0] as Typed<'ToolCallObserved'>;
}

describe('plannedStepsOf', () => {
  it("should count a TodoWrite's todos and an update_plan's steps", () => {
    expect(plannedStepsOf('TodoWrite', { todos: TODOS })).toBe(3);
    expect(plannedStepsOf('update_plan', { plan: [{ step: 'a', status: 'pending' }] })).toBe(1);
  });

  it('should find no plan in other tools, empty lists or malformed input', () => {
    expect(plannedStepsOf('Edit', { todos: TODOS })).toBeNull();
    expect(plannedStepsOf('TodoWrite', { todos: [] })).toBeNull();
    expect(plannedStepsOf('TodoWrite', { todos: 'three' })).toBeNull();
    expect(plannedStepsOf('TodoWrite', null)).toBeNull();
  });
});

describe('mcpResultSummary', () => {
  it('should keep the text of an MCP result, redacted', () => {
    const summary = mcpResultSummary('mcp__playwright__browser_click', CLICK_RESPONSE)!;
    expect(summary).toContain('- Page URL: http://localhost:3000/dashboard');
    expect(summary).not.toContain(TOKEN);
  });

  it('should read content blocks under `content`, plain text, and name images', () => {
    const response = { content: [{ type: 'text', text: 'Navigated' }, { type: 'image' }] };
    expect(mcpResultSummary('mcp__puppeteer__screenshot', response)).toBe('Navigated\n[image]');
    expect(mcpResultSummary('mcp__x__y', 'plain')).toBe('plain');
  });

  it('should keep nothing for non-MCP tools and empty results', () => {
    expect(mcpResultSummary('Read', CLICK_RESPONSE)).toBeNull();
    expect(mcpResultSummary('mcp__x__y', [])).toBeNull();
    expect(mcpResultSummary('mcp__x__y', { content: [{ type: 'text', text: '  ' }] })).toBeNull();
  });

  it('should cap a 1 MB result, recording how much was cut', () => {
    const huge = 'x'.repeat(1_000_000);
    const summary = mcpResultSummary('mcp__playwright__browser_snapshot', huge)!;
    expect(summary.length).toBeLessThan(EVENT_TEXT_CAPS.resultSummary + 40);
    expect(charsCut(summary)).toBe(1_000_000 - EVENT_TEXT_CAPS.resultSummary);
  });
});

describe('the hook mapping of plans and MCP results', () => {
  it("should put a TodoWrite's step count on its tool call", () => {
    const event = toolCall({
      tool_name: 'TodoWrite',
      tool_input: { todos: TODOS },
      tool_response: { oldTodos: [], newTodos: TODOS },
    });
    expect(event).toMatchObject({ toolName: 'TodoWrite', plannedSteps: 3, resultSummary: null });
  });

  it("should put an MCP browser tool's result on its tool call", () => {
    const event = toolCall({
      tool_name: 'mcp__playwright__browser_click',
      tool_input: { element: 'Sign in button', ref: 'e12' },
      tool_response: CLICK_RESPONSE,
    });
    expect(event.mcp).toBe(true);
    expect(event.plannedSteps).toBeNull();
    expect(event.resultSummary).toContain('Page URL: http://localhost:3000/dashboard');
    expect(event.resultSummary).not.toContain(TOKEN);
  });

  it('should leave the summary out of failed calls (the error says it) and of other tools', () => {
    const failed = toolCall({
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'mcp__playwright__browser_click',
      tool_input: { element: 'Sign in button' },
      error: 'Timeout 5000ms exceeded waiting for element to be visible',
    });
    expect(failed).toMatchObject({ outcome: 'error', resultSummary: null });
    expect(failed.errorMessage).toContain('Timeout 5000ms exceeded');
    const read = toolCall({
      tool_name: 'Read',
      tool_input: { file_path: `${ROOT}/a.ts` },
      tool_response: CLICK_RESPONSE,
    });
    expect(read).toMatchObject({ plannedSteps: null, resultSummary: null });
  });
});

describe('the transcript import of plans and MCP results', () => {
  const line = (n: number, type: string, content: unknown) =>
    JSON.stringify({
      type,
      uuid: `u${n}`,
      sessionId: SESSION,
      cwd: ROOT,
      timestamp: new Date(1_700_000_000_000 + n * 1_000).toISOString(),
      message: { role: type, content },
    });
  const transcript = [
    line(1, 'user', 'Check that signing in lands on the dashboard'),
    line(2, 'assistant', [
      { type: 'tool_use', id: 't1', name: 'TodoWrite', input: { todos: TODOS } },
    ]),
    line(3, 'user', [{ type: 'tool_result', tool_use_id: 't1', content: 'Todos updated' }]),
    line(4, 'assistant', [
      { type: 'tool_use', id: 't2', name: 'mcp__playwright__browser_click', input: { ref: 'e1' } },
    ]),
    line(5, 'user', [{ type: 'tool_result', tool_use_id: 't2', content: CLICK_RESPONSE }]),
  ].join('\n');

  it('should carry the plan and the MCP result as the hook would', () => {
    const reader = new ClaudeTranscriptReader();
    reader.read(transcript, `${SESSION}.jsonl`);
    const calls = reader
      .sessions()
      .flatMap((session) => mapTranscriptSession(session, PROJECT))
      .filter((event): event is Typed<'ToolCallObserved'> => event.type === 'ToolCallObserved');
    expect(calls.map((c) => [c.toolName, c.plannedSteps])).toEqual([
      ['TodoWrite', 3],
      ['mcp__playwright__browser_click', null],
    ]);
    expect(calls[0].resultSummary).toBeNull();
    expect(calls[1].resultSummary).toContain('Page URL: http://localhost:3000/dashboard');
    expect(calls[1].resultSummary).not.toContain(TOKEN);
  });
});

describe('the Codex import of plans', () => {
  const codexLine = (at: string, type: string, payload: object) =>
    JSON.stringify({ timestamp: `2026-11-21T14:02:${at}.000Z`, type, payload });
  const plan = [
    { step: 'Reproduce the lint failure', status: 'completed' },
    { step: 'Install eslint locally', status: 'in_progress' },
  ];
  const rollout = [
    codexLine('00', 'session_meta', { id: SESSION, cwd: ROOT, originator: 'codex_exec' }),
    codexLine('01', 'event_msg', { type: 'user_message', message: 'why does make lint fail?' }),
    codexLine('02', 'response_item', {
      type: 'function_call',
      name: 'update_plan',
      arguments: JSON.stringify({ explanation: 'first look', plan }),
      call_id: 'call_plan',
    }),
    codexLine('03', 'response_item', {
      type: 'function_call_output',
      call_id: 'call_plan',
      output: 'Plan updated',
    }),
  ].join('\n');

  it("should carry an update_plan call's step count", () => {
    const reader = new CodexSessionReader();
    reader.read(rollout, `rollout-2026-11-21T14-02-00-${SESSION}.jsonl`);
    const calls = reader
      .sessions()
      .flatMap((session) => mapCodexSession(session, PROJECT))
      .filter((event): event is Typed<'ToolCallObserved'> => event.type === 'ToolCallObserved');
    expect(calls.map((c) => [c.toolName, c.plannedSteps, c.resultSummary])).toEqual([
      ['update_plan', 2, null],
    ]);
  });
});
