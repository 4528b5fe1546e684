import { describe, expect, it } from 'vitest';
import { formatDistillation } from '../format';
import { debuggingSession, SessionBuilder } from '../testing/session-builder';
import { clockTime } from '../time';
import { distillationWindow, type DistillationTrigger, type SessionEvents } from '../triggers';
import type { Distillation, DistilledFact } from '../types';
import { distillExtractively } from './extractive-distiller';

function distill(trigger: DistillationTrigger, events: SessionEvents): Distillation {
  const decision = distillationWindow(trigger, events);
  if (decision.kind !== 'distill') throw new Error(decision.reason);
  return distillExtractively(decision.window);
}

function facts(distillation: Distillation): DistilledFact[] {
  return distillation.segments.flatMap((segment) => segment.facts);
}

function find(distillation: Distillation, fragment: string): DistilledFact {
  const fact = facts(distillation).find((f) => f.text.includes(fragment));
  if (fact === undefined) {
    throw new Error(`no fact with "${fragment}" in:\n${formatDistillation(distillation)}`);
  }
  return fact;
}

describe('distillExtractively — golden: a debugging session', () => {
  const session = debuggingSession();
  const trigger = session.sessionEnded();
  const distillation = distill(trigger, session.events());

  it('should keep the root cause and its fix as 🔴, tied to the failing and passing runs', () => {
    const fact = find(distillation, 'npm test -- src/auth/refresh.spec.ts');
    expect(fact).toMatchObject({
      priority: '🔴',
      kind: 'error-resolution',
      time: '09:04',
      text: '`npm test -- src/auth/refresh.spec.ts` failed with "AssertionError: expected 401 to be 200"; fixed by editing src/auth/cache.ts, src/auth/clock.ts, after which it passed',
    });
    expect(fact.sourceEventIds).toEqual([
      'sess-debug-t3',
      'sess-debug-t4',
      'sess-debug-t6',
      'sess-debug-t7',
    ]);
    expect(fact.relatedFiles).toEqual(['src/auth/cache.ts', 'src/auth/clock.ts']);
  });

  it("should keep the user's correction in their words, with what it corrects to, as 🔴", () => {
    expect(find(distillation, 'Correction:')).toMatchObject({
      priority: '🔴',
      kind: 'correction',
      time: '09:03',
      text: "Correction: don't touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts.",
      sourceEventIds: ['sess-debug-p2'],
      relatedFiles: ['src/auth/clock.ts'],
    });
  });

  it('should keep a decision with its rationale as 🔴', () => {
    expect(find(distillation, 'Decision:')).toMatchObject({
      priority: '🔴',
      kind: 'decision',
      text: "Decision: Let's use fake timers instead of real sleeps in these tests because the CI machines are slow.",
    });
  });

  it('should keep a stated rule as 🔴', () => {
    expect(find(distillation, 'Rule:')).toMatchObject({
      priority: '🔴',
      kind: 'rule',
      time: '09:07',
      text: 'Rule: Always run the auth tests with --no-file-parallelism from now on.',
    });
  });

  it('should keep a command that worked after another failed as 🔴', () => {
    expect(find(distillation, 'worked where')).toMatchObject({
      priority: '🔴',
      kind: 'command-fix',
      text: '`npx vitest run src/auth` worked where `npm run test:unit` failed with "Error: Cannot find module \'vitest/config\'"',
    });
  });

  it('should keep edits that serve a correction, a decision or no action as 🟢 bookkeeping only', () => {
    // The correction is its own 🔴 fact; "Edited X for: …" would only repeat it in recall.
    expect(find(distillation, 'Edited src/auth/clock.ts')).toMatchObject({
      priority: '🟢',
      kind: 'file-change',
      text: 'Edited src/auth/clock.ts (1 edit) for: "No, don\'t touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts."',
      sourceEventIds: ['sess-debug-p2', 'sess-debug-t6'],
    });
    expect(
      facts(distillation).filter((f) => f.kind === 'file-change' && f.priority !== '🟢'),
    ).toEqual([]);
  });

  it('should keep routine exploration as 🟢 and not turn questions or chatter into facts', () => {
    expect(find(distillation, 'Explored the code').priority).toBe('🟢');
    expect(facts(distillation).some((f) => f.text.includes('logout'))).toBe(false);
    expect(facts(distillation).some((f) => f.text.includes('"ok"'))).toBe(false);
  });

  it('should have exactly these priorities, in time order', () => {
    expect(facts(distillation).map((f) => `${f.priority} ${f.kind}`)).toEqual([
      '🟢 file-change',
      '🔴 correction',
      '🟢 exploration',
      '🟢 file-change',
      '🔴 error-resolution',
      '🔴 decision',
      '🟢 file-change',
      '🔴 command-fix',
      '🔴 rule',
    ]);
  });

  it('should never invent a timestamp: every time is the clock time of one of its source events', () => {
    const times = new Map(
      [...session.prompts, ...session.toolCalls].map((e) => [e.eventId, clockTime(e.timestamp)]),
    );
    for (const fact of facts(distillation)) {
      expect(fact.time).not.toBeNull();
      const sourceTimes = fact.sourceEventIds.map((id) => times.get(id));
      expect(sourceTimes).toContain(fact.time);
      expect(
        session.prompts
          .concat()
          .map((p) => p.timestamp)
          .concat(session.toolCalls.map((c) => c.timestamp)),
      ).toContain(fact.at);
    }
  });

  it('should narrate in sentences: the request, the work in words, the outcome and the lesson', () => {
    const [segment] = distillation.segments;
    expect(segment.narrative).toBe(
      'The user asked "The refresh token test in src/auth/refresh.spec.ts started failing after the upgrade, can you fix it". ' +
        'Read 3 files, edited src/auth/cache.ts, src/auth/clock.ts and src/auth/refresh.spec.ts and ran the tests. ' +
        "Done in 9 min; correction: don't touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts.",
    );
    expect(segment.title).toBe(
      'The refresh token test in src/auth/refresh.spec.ts started failing…',
    );
  });

  it('should say the session completed normally and leave no current task', () => {
    expect(distillation.currentTask).toBeNull();
    expect(distillation.suggestedResponse).toBe('Session completed normally.');
    expect(distillation.method).toBe('extractive');
    expect(distillation.date).toBe('2026-02-16');
  });

  it('should be deterministic: the same window twice gives the same distillation', () => {
    const again = distill(trigger, {
      ...session.events(),
      toolCalls: [...session.toolCalls].reverse(),
    });
    expect(again).toEqual(distillation);
  });
});

describe('distillExtractively', () => {
  const T0 = Date.UTC(2026, 1, 17, 14, 0);

  it('should describe unfinished work as the current task at a compaction', () => {
    const s = new SessionBuilder('sess-compact', T0);
    s.user('Migrate the billing export job from cron to the queue worker in src/billing/export.ts');
    s.tool('Edit', { files: ['src/billing/export.ts'] });
    s.tool('Bash', {
      command: 'npm run build',
      error: "src/billing/export.ts(12,7): error TS2304: Cannot find name 'Queue'.",
    });
    const d = distill(s.compactionPending(), s.events());
    expect(d.currentTask).toBe(
      'Primary: Migrate the billing export job from cron to the queue worker in src/billing/export.ts\n' +
        'Blocked on: `npm run build` still failing with "src/billing/export.ts(12,7): error TS2304: Cannot find name \'Queue\'."',
    );
    expect(d.suggestedResponse).toBe(
      'Continue with the last user request: "Migrate the billing export job from cron to the queue worker in src/billing/export.ts"',
    );
    expect(find(d, 'still failing')).toMatchObject({
      priority: '🟡',
      kind: 'error-unresolved',
      relatedFiles: ['src/billing/export.ts'],
    });
  });

  it('should make one segment per episode, a fact repeated across them kept once', () => {
    const s = new SessionBuilder('sess-two', T0);
    s.user('Never commit directly to main, open a pull request for the auth changes');
    s.tool('Bash', { command: 'git checkout -b fix/auth' });
    s.user('Now update the README install section for the new CLI flags');
    s.tool('Edit', { files: ['README.md'] });
    s.user('Never commit directly to main, open a pull request for the auth changes');
    const d = distill(s.sessionEnded(5), {
      ...s.events(),
      episodes: [
        { episodeId: 'ep-1', firstPromptId: 1, lastPromptId: 1 },
        { episodeId: 'ep-2', firstPromptId: 2, lastPromptId: 3 },
      ],
    });
    expect(d.segments.map((seg) => seg.episodeId)).toEqual(['ep-1', 'ep-2']);
    expect(facts(d).filter((f) => f.kind === 'rule')).toHaveLength(1);
    expect(d.segments[1].facts.map((f) => f.kind)).toEqual(['file-change']);
  });

  it('should call a pass on rerun without edits possibly flaky, at 🟡', () => {
    const s = new SessionBuilder('sess-flaky', T0);
    s.user('Run the e2e suite for checkout before the release');
    s.tool('Bash', { command: 'npm run e2e -- checkout', error: 'Timeout of 5000ms exceeded' });
    s.tool('Bash', { command: 'npm run e2e -- checkout' });
    expect(find(distill(s.episodeClosed(), s.events()), 'possibly flaky').priority).toBe('🟡');
  });

  it('should redact secrets that reach it in prompts', () => {
    const s = new SessionBuilder('sess-secret', T0);
    s.user(
      'Always use the staging key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD for the smoke tests.',
    );
    const d = distill(s.episodeClosed(), s.events());
    expect(formatDistillation(d)).not.toContain('sk-proj-abcdefghij');
    expect(find(d, 'Rule:').text).toContain('[REDACTED:');
  });

  it('should report a request that led to edits as what was done, at 🟡', () => {
    const s = new SessionBuilder('sess-limit', T0);
    s.user(
      'now add rate limiting to the public product search endpoint in src/api/search.ts, 20 requests per minute per ip',
    );
    s.tool('Read', { files: ['src/api/search.ts'] });
    s.tool('Edit', { files: ['src/api/search.ts'] });
    s.tool('Edit', { files: ['src/api/middleware.ts'] });
    s.tool('Bash', { command: 'npm test -- search' });
    const d = distill(s.episodeClosed(), s.events());
    expect(find(d, 'Added rate limiting')).toMatchObject({
      priority: '🟡',
      kind: 'file-change',
      text: 'Added rate limiting to the public product search endpoint in src/api/search.ts (20 requests per minute per ip); edited src/api/search.ts, src/api/middleware.ts',
      relatedFiles: ['src/api/search.ts', 'src/api/middleware.ts'],
    });
    expect(d.segments[0].narrative).toBe(
      'Added rate limiting to the public product search endpoint in src/api/search.ts (20 requests per minute per ip). ' +
        'Read 1 file, edited src/api/search.ts and src/api/middleware.ts and ran the tests. Done in 1 min.',
    );
  });

  it('should name a command run between a failure and its passing rerun as the fix', () => {
    const s = new SessionBuilder('sess-browsers', T0);
    s.user('run the e2e tests before we release');
    s.tool('Bash', {
      command: 'npm run test:e2e',
      error: "> app@1.0.0 test:e2e\n\nError: browserType.launch: Executable doesn't exist",
    });
    s.tool('Bash', { command: 'npx playwright install chromium' });
    s.tool('Bash', { command: 'npm run test:e2e' });
    expect(find(distill(s.episodeClosed(), s.events()), 'test:e2e')).toMatchObject({
      priority: '🔴',
      kind: 'error-resolution',
      text: '`npm run test:e2e` failed with "Error: browserType.launch: Executable doesn\'t exist"; fixed by running `npx playwright install chromium`, after which it passed',
    });
  });

  it('should not count a refused call, a missing cd directory or a server stopped at the timeout as failures', () => {
    const s = new SessionBuilder('sess-noise', T0);
    s.user('start the app and check it serves the charts');
    s.tool('Bash', {
      command: 'git init',
      error: "The user doesn't want to proceed with this tool use. The tool use was rejected.",
    });
    s.tool('Bash', {
      command: 'cd web && npm start',
      error: '(eval):cd:1: no such file or directory: web',
    });
    s.tool('Bash', {
      command: 'npm start 2>&1 | head -20',
      error:
        'Command timed out after 2m 0.0s (node:1) ExperimentalWarning: Type Stripping is experimental\n\u001b[32minfo\u001b[39m: listening on every interface',
    });
    const d = distill(s.episodeClosed(), s.events());
    expect(facts(d).filter((f) => f.kind !== 'exploration')).toEqual([]);
  });

  it('should keep routine shell failures (rm, mv, pkill …) at 🟢, out of the memories', () => {
    const s = new SessionBuilder('sess-shell', T0);
    s.user('move the charts into web/charts');
    s.tool('Bash', {
      command: 'mv charts/*.png web/charts/',
      error: 'mv: web/charts/ is not a directory',
    });
    s.tool('Bash', { command: 'pkill -f "node server.ts"', error: 'Error' });
    s.tool('Bash', { command: 'mkdir -p web/charts && mv charts/*.png web/charts/' });
    const shell = facts(distill(s.episodeClosed(), s.events())).filter(
      (f) => f.kind !== 'exploration',
    );
    expect(shell.map((f) => `${f.priority} ${f.kind}`)).toEqual([
      '🟢 error-unresolved',
      '🟢 command-fix',
    ]);
  });

  it('should pick the line of an error message that says what failed, not a banner or a warning', () => {
    const s = new SessionBuilder('sess-esm', T0);
    s.user('convert the entry point to ESM');
    s.tool('Bash', {
      command: 'npm start',
      error:
        "(node:31) ExperimentalWarning: Type Stripping is an experimental feature\nnode:internal/modules/esm/resolve:274\n    throw new ERR_MODULE_NOT_FOUND(\n          ^\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/config.js'",
    });
    s.tool('Edit', { files: ['src/index.ts'] });
    s.tool('Bash', { command: 'npm start' });
    expect(find(distill(s.episodeClosed(), s.events()), 'npm start').text).toBe(
      '`npm start` failed with "Error [ERR_MODULE_NOT_FOUND]: Cannot find module \'/app/config.js\'"; fixed by editing src/index.ts, after which it passed',
    );
  });

  it('should keep a state change the user states (what replaced what) as a 🔴 decision', () => {
    const s = new SessionBuilder('sess-state', T0);
    s.user(
      'We moved from Jest to Vitest last month, so the jest config is dead. Delete jest.config.js and drop the @types/jest dependency.',
    );
    s.tool('Edit', { files: ['package.json'] });
    const d = distill(s.episodeClosed(), s.events());
    expect(find(d, 'Change:')).toMatchObject({
      priority: '🔴',
      kind: 'state-change',
      text: 'Change: We moved from Jest to Vitest last month, so the jest config is dead.',
    });
    expect(find(d, 'Deleted jest.config.js')).toMatchObject({
      priority: '🟡',
      text: 'Deleted jest.config.js and dropped the @types/jest dependency; edited package.json',
    });
  });
});
