import type { Typed } from '@engram/contracts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HookProject } from './claude-code-hooks';
import {
  batchAcrossSessions,
  ClaudeTranscriptReader,
  mapTranscriptSession,
  TranscriptLineError,
} from './claude-transcript';

// Hand-written transcripts in Claude Code's format (see the header of claude-transcript.ts).
const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'claude-transcripts');
const WORK_SESSION = '4f1c2a9e-7b3d-4e61-9a2f-0c8d5e6b7a10';
const NEXT_SESSION = '9d2e7c41-1a5b-4c8e-b3f6-2e7a8c9d0b12';
const fixture = (session: string) => `-home-dev-webshop/${session}.jsonl`;
const content = (session: string) => readFileSync(join(FIXTURES, fixture(session)), 'utf8');

const PROJECT: HookProject = {
  tenantId: 'acme',
  projectId: 'webshop',
  projectRoot: '/home/dev/webshop',
  agentId: 'claude-code',
  userId: null,
  gitBranch: 'fix/token-refresh',
  gitHeadSha: null,
};

function importAll(...sessions: string[]) {
  const reader = new ClaudeTranscriptReader();
  for (const session of sessions) reader.read(content(session), fixture(session));
  const read = reader.sessions();
  return {
    reader,
    sessions: read,
    events: read.flatMap((session) => mapTranscriptSession(session, PROJECT)),
  };
}
const ofType = <T extends Typed['type']>(events: Typed[], type: T) =>
  events.filter((event): event is Typed<T> => event.type === type);

describe('Claude Code transcripts → Engram events', () => {
  it('should publish what the hooks would have: typed prompts, paired tool calls, lifecycle', () => {
    const { events } = importAll(WORK_SESSION);
    expect(events[0]).toMatchObject({
      type: 'SessionStarted',
      sessionId: WORK_SESSION,
      agentKind: 'claude-code',
      timestamp: Date.parse('2026-11-18T09:00:00.000Z'),
    });
    // The caveat (isMeta), /clear markup, the compaction summary and the interruption are not
    // prompts; the six things the user typed are, numbered in order.
    const prompts = ofType(events, 'PromptSubmitted');
    expect(prompts.map((p) => p.promptId)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(prompts[0].text).toMatch(/^the checkout test fails/);
    expect(prompts[1].text).toMatch(/^no, don't mock Date.now/);
    expect(prompts[3].text).toMatch(/^now add rate limiting/); // text blocks, not a string
    const ended = ofType(events, 'SessionEnded');
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ userMessageCount: 6, reason: 'other' });
    expect(events[events.length - 1]).toBe(ended[0]);
    expect(ofType(events, 'CompactionPending')).toEqual([
      expect.objectContaining({ lastPromptId: 5 }),
    ]);
  });

  it('should pair each tool_use with its tool_result: files, outcome, error, duration, prompt', () => {
    const { events } = importAll(WORK_SESSION);
    const calls = ofType(events, 'ToolCallObserved');
    // 21 results; the last tool_use was cut off before its result and is not published.
    expect(calls).toHaveLength(21);
    expect(calls.map((c) => c.stepIndex)).toEqual(calls.map((_, i) => i + 1));
    expect(calls[0]).toMatchObject({
      toolName: 'Read',
      filePaths: ['src/auth/refresh.ts'],
      outcome: 'ok',
      promptId: 1,
      durationMs: 2_000,
    });
    const failed = calls.filter((c) => c.outcome === 'error');
    expect(failed.map((c) => c.toolName)).toEqual(['Bash', 'Edit', 'Bash']);
    expect(failed[0]).toMatchObject({ command: 'npm test -- checkout', promptId: 1 });
    expect(failed[0].errorMessage).toContain("reading 'expiresAt'");
    expect(failed[1].errorMessage).toContain('File has been modified since read');
    expect(failed[2]).toMatchObject({ promptId: 4 });
    expect(failed[2].errorMessage).toContain('expected 200 to be 429');
    const grep = calls.find((c) => c.toolName === 'Grep');
    expect(grep).toMatchObject({ filePaths: ['src'], outcome: 'ok' });
  });

  it('should redact secrets before anything leaves the mapping', () => {
    const { events } = importAll(WORK_SESSION);
    const push = ofType(events, 'PromptSubmitted')[4];
    expect(push.text).toMatch(/^ok push/);
    expect(JSON.stringify(events)).not.toContain('sk_live_51HqR2bKx9Lm3Np7Qr8St4Uv');
  });

  it('should give the same event ids on every import (the hook mapping ids)', () => {
    const first = importAll(WORK_SESSION, NEXT_SESSION).events;
    const again = importAll(WORK_SESSION, NEXT_SESSION).events;
    expect(again.map((e) => e.eventId)).toEqual(first.map((e) => e.eventId));
    expect(new Set(first.map((e) => e.eventId)).size).toBe(first.length);
  });

  it('should report bad lines with file:line and go on with the rest', () => {
    const { reader, sessions } = importAll(WORK_SESSION, NEXT_SESSION);
    expect(reader.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^-home-dev-webshop\/9d2e.*\.jsonl:4: "timestamp" is missing/),
      expect.stringMatching(/^-home-dev-webshop\/9d2e.*\.jsonl:12: not valid JSON/),
    ]);
    expect(reader.errors[0]).toBeInstanceOf(TranscriptLineError);
    expect(reader.errors[1].raw).toMatch(/^\{"type": "assistant"/);
    expect(sessions.map((s) => s.sessionId)).toEqual([WORK_SESSION, NEXT_SESSION]);
    const next = sessions[1];
    expect(next.gitBranch).toBe('fix/refresh-timers');
    expect(next.steps.map((s) => s.payload.hook_event_name)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PostToolUse',
      'PostToolUseFailure',
      'PostToolUse',
      'PostToolUse',
      'UserPromptSubmit',
      'SessionEnd',
    ]);
    expect(reader.counts()).toMatchObject({ duplicates: 0, unpaired: 1 });
  });

  it('should skip lines read before (a resumed session repeats its history)', () => {
    const reader = new ClaudeTranscriptReader();
    reader.read(content(WORK_SESSION), 'a.jsonl');
    reader.read(content(WORK_SESSION), 'copy.jsonl');
    const events = reader.sessions().flatMap((s) => mapTranscriptSession(s, PROJECT));
    expect(ofType(events, 'PromptSubmitted')).toHaveLength(6);
    expect(reader.counts().duplicates).toBe(57);
  });
});

describe('batchAcrossSessions', () => {
  const runs = (events: string[]) =>
    events.filter((event, i) => i === 0 || event[0] !== events[i - 1][0]).length;

  it("should keep each session's order and bring the same topics together", () => {
    // Events as "<topic><session><n>": lifecycle L, prompt P, tool call T.
    const sessions = [
      ['La1', 'Pa2', 'Ta3', 'Ta4', 'Pa5', 'Ta6', 'La7'],
      ['Lb1', 'Pb2', 'Tb3', 'Pb4', 'Tb5', 'Tb6', 'Lb7'],
      ['Lc1', 'Pc2', 'Lc3'],
    ];
    const ordered = batchAcrossSessions(sessions, (event) => event[0]);
    expect([...ordered].sort()).toEqual(sessions.flat().sort());
    for (const session of sessions) {
      expect(ordered.filter((event) => session.includes(event))).toEqual(session);
    }
    expect(runs(ordered)).toBeLessThan(runs(sessions.flat()));
    expect(ordered.slice(0, 3)).toEqual(['La1', 'Lb1', 'Lc1']);
  });

  it('should order the fixture sessions the same way every time', () => {
    const { sessions } = importAll(WORK_SESSION, NEXT_SESSION);
    const events = sessions.map((session) => mapTranscriptSession(session, PROJECT));
    const once = batchAcrossSessions(events, (event) => event.type).map((e) => e.eventId);
    expect(batchAcrossSessions(events, (event) => event.type).map((e) => e.eventId)).toEqual(once);
    expect(once).toHaveLength(events.flat().length);
  });
});
