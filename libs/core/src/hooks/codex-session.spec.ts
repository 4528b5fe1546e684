import type { Typed } from '@engram/contracts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newHookSessionState, type HookProject } from './claude-code-hooks';
import { TranscriptLineError } from './claude-transcript';
import {
  CodexSessionReader,
  mapCodexSession,
  mapCodexSteps,
  patchFiles,
  type CodexSession,
} from './codex-session';

// Rollouts written in Codex CLI's current format (see the header of codex-session.ts): a working
// session (a failing test fixed with apply_patch, a failed migration, a compaction, an
// interrupted call, two line types this reader does not know) and a short `codex exec` one.
const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'codex-sessions');
const WORK_SESSION = 'a3c9e2f0-5b7d-4c1e-8f2a-9d6b3e1c7a45';
const WORK_FILE = join(FIXTURES, '2026/11/20', `rollout-2026-11-20T09-00-00-${WORK_SESSION}.jsonl`);
const EXEC_SESSION = '5e81d7b2-0c4f-4a96-b3e5-71f0a2c8d934';
const EXEC_FILE = join(FIXTURES, '2026/11/21', `rollout-2026-11-21T14-02-00-${EXEC_SESSION}.jsonl`);

const PROJECT: HookProject = {
  tenantId: 'acme',
  projectId: 'webshop',
  projectRoot: '/home/dev/webshop',
  agentId: 'codex',
  userId: null,
  gitBranch: 'fix/cart-total',
  gitHeadSha: null,
};

function readAll(...files: string[]) {
  const reader = new CodexSessionReader();
  for (const file of files) reader.read(readFileSync(file, 'utf8'), file);
  const sessions = reader.sessions();
  return {
    reader,
    sessions,
    events: sessions.flatMap((session) => mapCodexSession(session, PROJECT)),
  };
}
const ofType = <T extends Typed['type']>(events: Typed[], type: T) =>
  events.filter((event): event is Typed<T> => event.type === type);

describe('Codex rollouts → Engram events', () => {
  it('should map prompts, paired tool calls and the lifecycle, in order', () => {
    const { events, reader } = readAll(WORK_FILE);
    expect(events.map((event) => event.type)).toEqual([
      'SessionStarted',
      'PromptSubmitted',
      'ToolCallObserved', // shell: npm test fails
      'ToolCallObserved', // shell_command: sed
      'ToolCallObserved', // apply_patch (custom tool)
      'ToolCallObserved', // exec_command: npm test passes
      'PromptSubmitted',
      'ToolCallObserved', // local_shell_call: psql fails
      'ToolCallObserved', // apply_patch (function) fails verification
      'ToolCallObserved', // web_search_call
      'CompactionPending',
      'PromptSubmitted',
      'SessionEnded',
    ]);
    expect(events.every((event) => event.sessionId === WORK_SESSION)).toBe(true);
    expect(events[0]).toMatchObject({
      type: 'SessionStarted',
      agentKind: 'codex',
      agentId: 'codex',
      timestamp: Date.parse('2026-11-20T09:00:00.000Z'),
    });
    // What the user typed, not the injected AGENTS.md and environment context.
    const prompts = ofType(events, 'PromptSubmitted');
    expect(prompts.map((p) => p.promptId)).toEqual([1, 2, 3]);
    expect(prompts[0].text).toMatch(/^the cart total test fails since the discount change/);
    expect(prompts[2].text).toBe('ok leave the migration, just show me git status');
    expect(ofType(events, 'SessionEnded')[0]).toMatchObject({
      userMessageCount: 3,
      durationS: 313,
      timestamp: Date.parse('2026-11-20T09:05:13.000Z'),
      reason: 'other',
    });
    expect(ofType(events, 'CompactionPending')[0]).toMatchObject({ lastPromptId: 2 });
    // The interrupted `git status` has no output; the ghost snapshot and world_state are unknown.
    expect(reader.counts()).toEqual({ lines: 40, duplicates: 0, unpaired: 1, unknown: 2 });
    expect(reader.errors).toEqual([]);
  });

  it('should map shell calls as Bash with their command and outcome from the exit code', () => {
    const calls = ofType(readAll(WORK_FILE).events, 'ToolCallObserved');
    expect(
      calls.map(({ toolName, command, outcome, promptId, stepIndex, durationMs }) => ({
        toolName,
        command,
        outcome,
        promptId,
        stepIndex,
        durationMs,
      })),
    ).toEqual([
      b('npm test -- src/cart', 'error', 1, 1, 2400),
      b('sed -n 1,60p src/cart/total.ts', 'ok', 1, 2, 150),
      { ...b(null, 'ok', 1, 3, 110), toolName: 'Edit' },
      b('npm test -- src/cart', 'ok', 1, 4, 3200),
      b(
        'psql postgres://shop:[REDACTED:url-password]@db.staging.internal:5432/shop -f ' +
          'migrations/0042_discount.sql',
        'error',
        2,
        5,
        400,
      ),
      { ...b(null, 'error', 2, 6, 50), toolName: 'Edit' },
      { ...b(null, 'ok', 2, 7, 0), toolName: 'web_search' },
    ]);
    expect(calls[0].errorMessage).toMatch(/expected 9000, received 8100/);
    expect(calls[4].errorMessage).toMatch(/Connection refused/);
    expect(calls[5].errorMessage).toMatch(/^apply_patch verification failed/);
    const exec = ofType(readAll(EXEC_FILE).events, 'ToolCallObserved');
    expect(exec).toMatchObject([
      { toolName: 'Bash', command: 'make lint', outcome: 'error', errorMessage: /eslint: No such/ },
    ]);
  });

  it('should name every file of a patch, relative to the project', () => {
    const edits = ofType(readAll(WORK_FILE).events, 'ToolCallObserved').filter(
      (call) => call.toolName === 'Edit',
    );
    expect(edits.map((edit) => edit.filePaths)).toEqual([
      ['src/cart/total.ts', 'src/cart/total.regression.spec.ts'],
      ['migrations/0042_discount.sql'],
    ]);
    expect(edits[0].argsJson).toContain('*** Update File: src/cart/total.ts');
  });

  it('should redact secrets in prompts, commands and arguments', () => {
    const text = JSON.stringify(readAll(WORK_FILE).events);
    expect(text).not.toContain('ghp_Q7tVb2XkR9mLw4Zp8NcYs3Hd6Fj1Ga0Ue5Io');
    expect(text).not.toContain('Xk29vLq7Rt4mWz81');
    expect(text).toContain('GITHUB_TOKEN=[REDACTED:github-token]');
  });

  it('should give the same ids on every import, and different ids to different sessions', () => {
    const first = readAll(WORK_FILE, EXEC_FILE).events;
    const second = readAll(WORK_FILE, EXEC_FILE).events;
    expect(second).toEqual(first);
    expect(new Set(first.map((event) => event.eventId)).size).toBe(first.length);
    expect(readAll(EXEC_FILE).events).toEqual(
      first.filter((event) => event.sessionId === EXEC_SESSION),
    );
  });

  it('should read a file fed in pieces, and map it in pieces, as the whole file', () => {
    const whole = readAll(WORK_FILE).sessions[0];
    const lines = readFileSync(WORK_FILE, 'utf8').split('\n');
    const reader = new CodexSessionReader();
    const cuts = [0, 1, 9, 10, 23, lines.length];
    let session: CodexSession | undefined;
    let state = newHookSessionState();
    let mapped = 0;
    const events: Typed[] = [];
    for (let i = 1; i < cuts.length; i += 1) {
      reader.read(lines.slice(cuts[i - 1], cuts[i]).join('\n'), WORK_FILE, cuts[i - 1] + 1);
      [session] = reader.sessions();
      // All but the SessionEnd, which a followed session gets only when it goes quiet.
      const fresh = mapCodexSteps(session.steps.slice(mapped, -1), state, PROJECT);
      state = fresh.state;
      mapped = session.steps.length - 1;
      events.push(...fresh.events);
    }
    expect(session).toEqual(whole);
    const end = mapCodexSteps(session!.steps.slice(-1), state, PROJECT).events;
    expect([...events, ...end]).toEqual(mapCodexSession(whole, PROJECT));
  });

  it('should report bad lines with file:line and skip lines it does not know', () => {
    const reader = new CodexSessionReader();
    const file = '/tmp/rollout-2026-11-22T08-00-00-0b9d7c3e-2f14-4a8b-9e6d-5c1a7f3b8e20.jsonl';
    const line = (type: string, payload: unknown, timestamp = '2026-11-22T08:00:01.000Z') =>
      JSON.stringify({ timestamp, type, payload });
    reader.read(
      [
        line('event_msg', { type: 'user_message', message: 'hello' }),
        line('event_msg', { type: 'user_message', message: 'no time' }, 'yesterday'),
        '{"timestamp":"2026-11-22T08:00:02.000Z","type":"response_item","payl',
        '{"record_type":"state"}',
        line('response_item', { type: 'function_call', name: 'shell', arguments: '{}' }),
        line('response_item', { type: 'function_call_output', call_id: 'nobody', output: '' }),
      ].join('\n'),
      file,
      7,
    );
    expect(reader.errors.map((error) => [error.line, error.detail])).toEqual([
      [8, expect.stringMatching(/"timestamp" is missing/)],
      [9, expect.stringMatching(/^not valid JSON/)],
      [11, 'function_call without a "call_id"'],
    ]);
    expect(reader.errors[0]).toBeInstanceOf(TranscriptLineError);
    expect(reader.counts()).toMatchObject({ lines: 6, unknown: 1, unpaired: 1 });
    // No session_meta: the session is the uuid of the file name.
    const [session] = reader.sessions();
    expect(session.sessionId).toBe('0b9d7c3e-2f14-4a8b-9e6d-5c1a7f3b8e20');
    expect(session.cwd).toBeNull();
  });

  it('should see an apply_patch run through the shell as a file edit', () => {
    const reader = new CodexSessionReader();
    const file = 'rollout-x.jsonl';
    const patch = '*** Begin Patch\n*** Update File: a.ts\n*** Move to: b.ts\n*** End Patch';
    const at = (s: number) => `2026-11-22T08:00:0${s}.000Z`;
    const call = (s: number, id: string, command: unknown) =>
      JSON.stringify({
        timestamp: at(s),
        type: 'response_item',
        payload: {
          type: 'function_call',
          name: 'shell',
          call_id: id,
          arguments: JSON.stringify({ command, workdir: '/home/dev/webshop/src' }),
        },
      });
    const output = (s: number, id: string) =>
      JSON.stringify({
        timestamp: at(s),
        type: 'response_item',
        payload: { type: 'function_call_output', call_id: id, output: 'Done!' },
      });
    reader.read(
      [
        call(1, 'c1', ['apply_patch', patch]),
        output(2, 'c1'),
        call(3, 'c2', ['bash', '-lc', `apply_patch <<'EOF'\n${patch}\nEOF`]),
        output(4, 'c2'),
      ].join('\n'),
      file,
    );
    const edits = ofType(mapCodexSession(reader.sessions()[0], PROJECT), 'ToolCallObserved');
    expect(edits.map((edit) => [edit.toolName, edit.filePaths, edit.outcome])).toEqual([
      ['Edit', ['src/a.ts', 'src/b.ts'], 'ok'],
      ['Edit', ['src/a.ts', 'src/b.ts'], 'ok'],
    ]);
  });

  it('should cut long prompts and outputs, and still see a long output fail', () => {
    const reader = new CodexSessionReader();
    const line = (s: number, payload: unknown, type = 'response_item') =>
      JSON.stringify({ timestamp: `2026-11-22T08:00:0${s}.000Z`, type, payload });
    const huge = 'x'.repeat(200_000);
    const output = JSON.stringify({ output: huge, metadata: { exit_code: 1 } });
    reader.read(
      [
        line(1, { type: 'user_message', message: `look at this log ${huge}` }, 'event_msg'),
        line(2, { type: 'function_call', name: 'shell', call_id: 'c1', arguments: '{}' }),
        line(3, { type: 'function_call_output', call_id: 'c1', output }),
      ].join('\n'),
      'rollout-huge.jsonl',
    );
    const events = mapCodexSession(reader.sessions()[0], PROJECT);
    expect(ofType(events, 'PromptSubmitted')[0].text.length).toBeLessThan(66_000);
    const [call] = ofType(events, 'ToolCallObserved');
    expect(call.outcome).toBe('error');
    expect(call.errorMessage!.length).toBeLessThan(66_000);
  });

  it('should take file names from patch headers, once each', () => {
    expect(
      patchFiles(
        '*** Begin Patch\n*** Add File: x/new.ts\n+a\n*** Delete File: old.ts\n' +
          '*** Update File: x/new.ts\n*** End Patch',
      ),
    ).toEqual(['x/new.ts', 'old.ts']);
    expect(patchFiles('no patch here')).toEqual([]);
  });
});

function b(
  command: string | null,
  outcome: 'ok' | 'error',
  promptId: number,
  stepIndex: number,
  durationMs: number,
) {
  return { toolName: 'Bash', command, outcome, promptId, stepIndex, durationMs };
}
