import { SCHEMA_VERSION, type Typed } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { charsCut, EVENT_TEXT_CAPS } from '../redaction';
import {
  HOOK_SCHEMA_VERSION,
  hookArgsJson,
  hookContextOutput,
  hookFilePaths,
  HookPayloadError,
  hookResponseFailure,
  mapClaudeCodeHook,
  newHookSessionState,
  parseClaudeCodeHookPayload,
  pendingReviewLine,
  withPendingReviewLine,
  parseHookSessionState,
  REDELIVERY_WINDOW_MS,
  toolCallEventId,
  type ClaudeCodeHookPayload,
  type HookProject,
  type HookSessionState,
} from './claude-code-hooks';

// Payloads in the shape Claude Code writes to a command hook's stdin (code.claude.com/docs/en/
// hooks, "Hook input": the common fields plus each event's own; tool_response shapes as the
// Read / Bash / Write tools return them).
const SESSION = '8a4f2c1e-5b7d-4e3a-9c2f-1d6e8b0a7f35';
const ROOT = '/home/dev/shop';
const common = {
  session_id: SESSION,
  transcript_path: `/home/dev/.claude/projects/-home-dev-shop/${SESSION}.jsonl`,
  cwd: ROOT,
  permission_mode: 'default',
};
const FIXTURES = {
  sessionStart: {
    ...common,
    hook_event_name: 'SessionStart',
    source: 'startup',
    model: 'claude-sonnet-4-5',
  },
  prompt: {
    ...common,
    hook_event_name: 'UserPromptSubmit',
    prompt:
      'The login test fails with a timeout, fix it. My token is ghp_0123456789abcdefghijABCDEFGHIJ012345',
  },
  preRead: {
    ...common,
    hook_event_name: 'PreToolUse',
    tool_name: 'Read',
    tool_use_id: 'toolu_01',
    tool_input: { file_path: `${ROOT}/src/auth/login.ts` },
  },
  postRead: {
    ...common,
    hook_event_name: 'PostToolUse',
    tool_name: 'Read',
    tool_use_id: 'toolu_01',
    tool_input: { file_path: `${ROOT}/src/auth/login.ts` },
    tool_response: {
      type: 'text',
      file: { filePath: `${ROOT}/src/auth/login.ts`, content: 'export …', numLines: 80 },
    },
  },
  postBashFailed: {
    ...common,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_use_id: 'toolu_02',
    tool_input: {
      command: 'PGPASSWORD=hunter2hunter2 npm test -- auth',
      description: 'Run the auth tests',
    },
    tool_response: {
      stdout: '',
      stderr: 'FAIL src/auth/login.spec.ts\n  ● login › times out after 5000 ms',
      interrupted: false,
      isImage: false,
      exit_code: 1,
    },
  },
  postEditFailure: {
    ...common,
    hook_event_name: 'PostToolUseFailure',
    tool_name: 'Edit',
    tool_use_id: 'toolu_03',
    tool_input: { file_path: `${ROOT}/src/auth/login.ts`, old_string: 'a', new_string: 'b' },
    error: 'String to replace not found in file.',
    is_interrupt: false,
  },
  preCompact: {
    ...common,
    hook_event_name: 'PreCompact',
    trigger: 'auto',
    custom_instructions: '',
  },
  stop: { ...common, hook_event_name: 'Stop', stop_hook_active: false },
  sessionEnd: { ...common, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
} satisfies Record<string, ClaudeCodeHookPayload>;

const PROJECT: HookProject = {
  tenantId: 'acme',
  projectId: 'shop',
  projectRoot: ROOT,
  agentId: 'claude-code',
  userId: null,
  gitBranch: 'fix/login-timeout',
  gitHeadSha: 'a'.repeat(40),
};

/** Runs payloads through the mapping in order, threading the state, one second apart. */
function session(payloads: ClaudeCodeHookPayload[], start = 1_700_000_000_000) {
  let state: HookSessionState = newHookSessionState();
  const events: Typed[] = [];
  payloads.forEach((payload, i) => {
    const mapping = mapClaudeCodeHook(payload, state, PROJECT, start + i * 1_000);
    state = mapping.state;
    events.push(...mapping.events);
  });
  return { events, state };
}

describe('parseClaudeCodeHookPayload', () => {
  it('should read a documented payload', () => {
    const payload = parseClaudeCodeHookPayload(JSON.stringify(FIXTURES.postRead));
    expect(payload.hook_event_name).toBe('PostToolUse');
    expect(payload.tool_name).toBe('Read');
  });

  it.each([
    ['not json', 'not JSON'],
    ['[1]', 'JSON object'],
    ['{"hook_event_name":"Stop"}', 'session_id'],
    [JSON.stringify({ session_id: 's', hook_event_name: '' }), 'hook_event_name'],
    [JSON.stringify({ session_id: 's', hook_event_name: 'Stop', cwd: 3 }), 'cwd'],
  ])('should refuse %s naming the problem', (input, problem) => {
    expect(() => parseClaudeCodeHookPayload(input)).toThrow(HookPayloadError);
    expect(() => parseClaudeCodeHookPayload(input)).toThrow(problem);
  });
});

describe('mapClaudeCodeHook', () => {
  it('should map a whole session to the contract events, in order', () => {
    const { events, state } = session([
      FIXTURES.sessionStart,
      FIXTURES.prompt,
      FIXTURES.preRead,
      FIXTURES.postRead,
      FIXTURES.postBashFailed,
      FIXTURES.postEditFailure,
      FIXTURES.stop,
      FIXTURES.preCompact,
      FIXTURES.sessionEnd,
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'SessionStarted',
      'PromptSubmitted',
      'ToolCallObserved',
      'ToolCallObserved',
      'ToolCallObserved',
      'CompactionPending',
      'SessionEnded',
    ]);
    for (const event of events) {
      expect(event).toMatchObject({
        tenantId: 'acme',
        projectId: 'shop',
        sessionId: SESSION,
        agentId: 'claude-code',
        userId: null,
        schemaVersion: SCHEMA_VERSION,
      });
    }
    expect(new Set(events.map((event) => event.eventId)).size).toBe(events.length);
    expect(state).toMatchObject({ promptCount: 1, stepCount: 3, lifecycleCount: 3 });
    expect(HOOK_SCHEMA_VERSION).toBe(SCHEMA_VERSION);
  });

  it('should fill SessionStarted from the git facts', () => {
    const [event] = session([FIXTURES.sessionStart]).events;
    expect(event).toMatchObject({
      type: 'SessionStarted',
      agentKind: 'claude-code',
      gitBranch: 'fix/login-timeout',
      gitHeadSha: 'a'.repeat(40),
    });
  });

  it('should number prompts per session and redact their text', () => {
    const { events } = session([FIXTURES.prompt, { ...FIXTURES.prompt, prompt: 'now run it' }]);
    expect(events.map((e) => (e as Typed<'PromptSubmitted'>).promptId)).toEqual([1, 2]);
    const first = events[0] as Typed<'PromptSubmitted'>;
    expect(first.text).toContain('[REDACTED:github-token]');
    expect(first.text).not.toContain('ghp_');
    expect(first).toMatchObject({ source: 'user', channel: 'cli', channelKind: 'implicit' });
  });

  it('should map tool calls with relative paths, outcome, error, step and prompt', () => {
    const { events } = session([
      FIXTURES.prompt,
      FIXTURES.preRead,
      FIXTURES.postRead,
      FIXTURES.postBashFailed,
      FIXTURES.postEditFailure,
    ]);
    const [read, bash, edit] = events.slice(1) as Typed<'ToolCallObserved'>[];
    expect(read).toMatchObject({
      toolName: 'Read',
      filePaths: ['src/auth/login.ts'],
      outcome: 'ok',
      errorMessage: null,
      promptId: 1,
      stepIndex: 1,
      durationMs: 1_000,
      command: null,
      mcp: false,
    });
    expect(bash).toMatchObject({ toolName: 'Bash', outcome: 'error', stepIndex: 2, filePaths: [] });
    expect(bash.errorMessage).toContain('times out after 5000 ms');
    expect(bash.command).not.toContain('hunter2');
    expect(bash.argsJson).not.toContain('hunter2');
    expect(edit).toMatchObject({
      toolName: 'Edit',
      outcome: 'error',
      errorMessage: 'String to replace not found in file.',
      stepIndex: 3,
    });
    expect(JSON.parse(edit.argsJson)).toMatchObject({ old_string: 'a', new_string: 'b' });
  });

  it('should publish nothing for PreToolUse and Stop, and ask for file memory on a Read', () => {
    const pre = mapClaudeCodeHook(FIXTURES.preRead, newHookSessionState(), PROJECT, 1);
    expect(pre.events).toEqual([]);
    expect(pre.memory).toEqual({
      kind: 'file',
      hookEventName: 'PreToolUse',
      toolName: 'Read',
      filePath: 'src/auth/login.ts',
    });
    expect(mapClaudeCodeHook(FIXTURES.stop, newHookSessionState(), PROJECT, 1).events).toEqual([]);
  });

  it('should ask for context at SessionStart (branch words) and for each prompt', () => {
    const start = mapClaudeCodeHook(FIXTURES.sessionStart, newHookSessionState(), PROJECT, 1);
    expect(start.memory).toEqual({
      kind: 'context',
      hookEventName: 'SessionStart',
      query: 'fix login timeout',
    });
    const prompt = mapClaudeCodeHook(FIXTURES.prompt, newHookSessionState(), PROJECT, 1);
    expect(prompt.memory).toMatchObject({ kind: 'context', hookEventName: 'UserPromptSubmit' });
    expect(prompt.memory?.kind === 'context' && prompt.memory.query).not.toContain('ghp_');
  });

  it('should not start the session again after a compaction', () => {
    const compact = { ...FIXTURES.sessionStart, source: 'compact' };
    const mapping = mapClaudeCodeHook(compact, newHookSessionState(), PROJECT, 1);
    expect(mapping.events).toEqual([]);
    expect(mapping.memory).not.toBeNull();
  });

  it('should end the session with its prompt count and duration', () => {
    const { events } = session([FIXTURES.sessionStart, FIXTURES.prompt, FIXTURES.sessionEnd]);
    expect(events[2]).toMatchObject({
      type: 'SessionEnded',
      userMessageCount: 1,
      durationS: 2,
      reason: 'prompt_input_exit',
    });
  });

  it('should give a re-delivered payload the same ids and counters (idempotent duplicate)', () => {
    const first = mapClaudeCodeHook(FIXTURES.prompt, newHookSessionState(), PROJECT, 1_000);
    const again = mapClaudeCodeHook(FIXTURES.prompt, first.state, PROJECT, 3_000);
    expect(again.redelivered).toBe(true);
    expect(again.events).toEqual(first.events);
    expect(again.state.promptCount).toBe(1);
  });

  it('should count the same prompt typed again later as a new prompt', () => {
    const first = mapClaudeCodeHook(FIXTURES.prompt, newHookSessionState(), PROJECT, 1_000);
    const later = mapClaudeCodeHook(
      FIXTURES.prompt,
      first.state,
      PROJECT,
      1_000 + REDELIVERY_WINDOW_MS + 1,
    );
    expect(later.redelivered).toBe(false);
    expect((later.events[0] as Typed<'PromptSubmitted'>).promptId).toBe(2);
    expect(later.events[0].eventId).not.toBe(first.events[0].eventId);
  });

  it('should give parallel tool calls distinct ids from their tool_use_id, whatever the counter', () => {
    // Issue 19 finding 3: two hooks that read the same counter state (parallel tool calls)
    // produced the same eventId, and the consumers dropped one call as a duplicate.
    const state = newHookSessionState();
    const a = mapClaudeCodeHook(FIXTURES.postRead, state, PROJECT, 1_000).events[0];
    const b = mapClaudeCodeHook(
      { ...FIXTURES.postRead, tool_use_id: 'toolu_02' },
      state,
      PROJECT,
      1_000,
    ).events[0];
    expect(a.eventId).not.toBe(b.eventId);
    // The same call delivered again, long after the re-delivery window: the same event.
    const late = mapClaudeCodeHook(FIXTURES.postRead, newHookSessionState(), PROJECT, 99_999_999);
    expect(late.events[0].eventId).toBe(a.eventId);
    expect(toolCallEventId(FIXTURES.postRead)).toBe(a.eventId);
    // Without an id of its own, the counter still decides.
    const bare = { ...FIXTURES.postRead, tool_use_id: undefined };
    expect(toolCallEventId(bare)).toBeUndefined();
    expect(mapClaudeCodeHook(bare, state, PROJECT, 1_000).events[0].eventId).not.toBe(a.eventId);
  });

  it('should derive event ids from session, hook event and counter only', () => {
    const a = session([FIXTURES.prompt], 1).events[0];
    const b = session([FIXTURES.prompt], 99_999).events[0];
    expect(a.eventId).toBe(b.eventId);
    const other = session([{ ...FIXTURES.prompt, session_id: 'other' }], 1).events[0];
    expect(other.eventId).not.toBe(a.eventId);
  });

  it('should publish nothing for unknown hook events', () => {
    const mapping = mapClaudeCodeHook(
      { ...common, hook_event_name: 'Notification' },
      newHookSessionState(),
      PROJECT,
      1,
    );
    expect(mapping.events).toEqual([]);
    expect(mapping.memory).toBeNull();
  });
});

describe('hook helpers', () => {
  it('should take file paths from each tool, relative to the root, dropping outside paths', () => {
    expect(hookFilePaths('Edit', { file_path: `${ROOT}/a/b.ts` }, ROOT)).toEqual(['a/b.ts']);
    expect(hookFilePaths('Grep', { pattern: 'x', path: `${ROOT}/src` }, ROOT)).toEqual(['src']);
    expect(hookFilePaths('Glob', { pattern: '**/*.ts' }, ROOT)).toEqual([]);
    expect(hookFilePaths('NotebookEdit', { notebook_path: 'n.ipynb' }, ROOT)).toEqual(['n.ipynb']);
    expect(hookFilePaths('Read', { file_path: '/etc/passwd' }, ROOT)).toEqual([]);
    expect(hookFilePaths('Read', { file_path: '/abs/x.ts' }, null)).toEqual([]);
    expect(hookFilePaths('Bash', { command: 'cat a.ts' }, ROOT)).toEqual([]);
    expect(hookFilePaths('mcp__fs__read', { path: 'docs/x.md' }, ROOT)).toEqual(['docs/x.md']);
  });

  it('should redact and cut tool arguments', () => {
    const args = JSON.parse(
      hookArgsJson({ content: 'x'.repeat(10_000), api_key: 'sk-live-secretvalue123' }),
    ) as Record<string, string>;
    expect(args.content.length).toBeLessThan(4_100);
    expect(args.api_key).toMatch(/^\[REDACTED:/);
    expect(hookArgsJson(undefined)).toBe('{}');
  });

  it('should cap a 5 MB prompt and 5 MB arguments, recording how much was cut (issue #19)', () => {
    const big = 'log line with detail\n'.repeat(250_000);
    const { events } = session([{ ...FIXTURES.prompt, prompt: big }]);
    const prompt = events[0] as Typed<'PromptSubmitted'>;
    expect(prompt.text.length).toBeLessThan(EVENT_TEXT_CAPS.text + 40);
    expect(charsCut(prompt.text)).toBe(big.length - EVENT_TEXT_CAPS.text);
    const args = hookArgsJson({ lines: Array.from({ length: 5_000 }, () => 'y'.repeat(1_000)) });
    expect(args.length).toBeLessThan(EVENT_TEXT_CAPS.argsJson + 200);
    const cut = JSON.parse(args) as { engramCut: { originalChars: number } };
    expect(cut.engramCut.originalChars).toBeGreaterThan(5_000_000);
  });

  it('should read failures from the response shapes', () => {
    expect(hookResponseFailure({ stdout: 'ok', stderr: '', interrupted: false })).toBeNull();
    expect(hookResponseFailure({ success: true, filePath: 'a' })).toBeNull();
    expect(hookResponseFailure('plain text result')).toBeNull();
    expect(hookResponseFailure({ is_error: true, content: 'boom' })).toBe('boom');
    expect(hookResponseFailure({ stdout: '', stderr: '', interrupted: true })).toBe('interrupted');
    expect(hookResponseFailure({ error: 'denied' })).toBe('denied');
  });

  it('should read back a state file, starting afresh on garbage', () => {
    const state = { ...newHookSessionState(), promptCount: 4, stepCount: 9 };
    expect(parseHookSessionState(JSON.stringify(state))).toEqual(state);
    expect(parseHookSessionState('{oops')).toEqual(newHookSessionState());
    expect(parseHookSessionState(null)).toEqual(newHookSessionState());
    expect(parseHookSessionState('{"promptCount":-3}').promptCount).toBe(0);
  });

  it("should print Claude Code's additionalContext output, or nothing", () => {
    expect(JSON.parse(hookContextOutput('SessionStart', 'remember X')!)).toEqual({
      hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'remember X' },
    });
    expect(hookContextOutput('UserPromptSubmit', '  ')).toBeNull();
  });

  it('should mention pending review items in one line, only when there are any', () => {
    expect(pendingReviewLine(0)).toBe('');
    expect(pendingReviewLine(1)).toBe(
      'Engram: 1 MEMORY.md proposal awaits review for this project (`engram review` lists them).',
    );
    expect(pendingReviewLine(3)).toContain('3 MEMORY.md proposals await review');
    expect(withPendingReviewLine('ctx', 0)).toBe('ctx');
    expect(withPendingReviewLine('', 2)).toBe(pendingReviewLine(2));
    expect(withPendingReviewLine('ctx', 2)).toBe(`ctx\n\n${pendingReviewLine(2)}`);
  });
});
