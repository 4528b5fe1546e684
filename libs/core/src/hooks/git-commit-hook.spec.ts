import { describe, expect, it } from 'vitest';
import type { ClaudeCodeHookPayload, HookProject } from './claude-code-hooks';
import {
  gitCommitInvocation,
  hookCommitCommand,
  hookCommitMade,
  MAX_COMMIT_AGE_MS,
  parseLastCommit,
  type LastCommit,
} from './git-commit-hook';

const SHA = 'a'.repeat(40);
const SESSION = '8a4f2c1e-5b7d-4e3a-9c2f-1d6e8b0a7f35';
const PROJECT: HookProject = {
  tenantId: 'acme',
  projectId: 'shop',
  projectRoot: '/home/dev/shop',
  agentId: 'claude-code',
  userId: null,
  gitBranch: 'fix/login',
  gitHeadSha: SHA,
};

describe('gitCommitInvocation', () => {
  it.each([
    ['git commit -m "fix the login test"', 'commit', null],
    ['git add -A && git commit -am wip', 'commit', null],
    // Claude Code's usual form: the message in a quoted heredoc.
    [`git commit -m "$(cat <<'EOF'\nfix: refresh; git merge is not run\n\nEOF\n)"`, 'commit', null],
    ['cd sub; GIT_AUTHOR_NAME=x git -c user.name=y --no-pager commit --amend', 'commit', null],
    ['git -C ../shop -C api commit -m x', 'commit', '../shop/api'],
    ['/usr/bin/git merge --no-edit feature', 'merge', null],
    ['git merge --continue', 'merge', null],
    ['git cherry-pick abc123', 'cherry-pick', null],
    ['git revert --no-edit HEAD', 'revert', null],
    ['git am < patch.mbox', 'am', null],
    ['env GIT_EDITOR=true git cherry-pick --continue', 'cherry-pick', null],
    ['npm test 2>&1 | tail -5 && git commit -m "tests pass"', 'commit', null],
  ])('should find the commit in %j', (command, subcommand, directory) => {
    expect(gitCommitInvocation(command)).toEqual({ subcommand, directory });
  });

  it.each([
    'git status',
    'git log -1 --format=%H',
    'git commit --dry-run',
    'git merge --abort',
    'git merge --squash feature',
    'git cherry-pick -n abc',
    'git revert --no-commit HEAD',
    'git am --abort',
    'git pull --rebase',
    'git rebase main',
    'echo "git commit -m x"',
    "echo 'git commit' && ls",
    'echo git\\ commit',
    'mygit commit',
    'git --git-dir=/elsewhere/.git commit -m x',
    'git --work-tree /elsewhere commit -m x',
    'git',
    '',
  ])('should find no commit in %j', (command) => {
    expect(gitCommitInvocation(command)).toBeNull();
  });

  it('should do linear work on long and adversarial commands', () => {
    const time = (text: string) => {
      let best = Infinity;
      for (let i = 0; i < 3; i += 1) {
        const start = performance.now();
        gitCommitInvocation(text);
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    const superLinear: string[] = [];
    for (const unit of ['git ', '"', "'\\", 'a=b ', '; ', '-C x ', '\\']) {
      const small = time(unit.repeat(2_500));
      const large = time(unit.repeat(10_000));
      if (large > 15 && large / Math.max(small, 1) >= 8) superLinear.push(unit);
    }
    expect(superLinear).toEqual([]);
    expect(gitCommitInvocation(`${'x'.repeat(5_000_000)} && git commit`)).toBeNull();
  });
});

describe('hookCommitCommand', () => {
  const post = (fields: Partial<ClaudeCodeHookPayload>): ClaudeCodeHookPayload => ({
    session_id: SESSION,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'git commit -m "x"', description: 'Commit' },
    tool_response: { stdout: '[main 1a2b3c4] x', stderr: '', interrupted: false },
    ...fields,
  });

  it('should take a successful Bash call that committed', () => {
    expect(hookCommitCommand(post({}))).toEqual({ subcommand: 'commit', directory: null });
  });

  it('should ignore failures, other tools and other hook events', () => {
    expect(hookCommitCommand(post({ tool_response: { exit_code: 1, stderr: 'x' } }))).toBeNull();
    expect(hookCommitCommand(post({ hook_event_name: 'PostToolUseFailure' }))).toBeNull();
    expect(hookCommitCommand(post({ hook_event_name: 'PreToolUse' }))).toBeNull();
    expect(hookCommitCommand(post({ tool_name: 'Read' }))).toBeNull();
    expect(hookCommitCommand(post({ tool_input: { command: 42 } }))).toBeNull();
    expect(hookCommitCommand(post({ tool_input: null }))).toBeNull();
  });
});

describe('parseLastCommit', () => {
  it('should read renames, deletions, additions and the message', () => {
    const output =
      `${SHA}\x1f1767603600\x1frefactor: sessions\n\nbody line\n\0\n` +
      'M\0c.ts\0A\0new file.ts\0D\0src/b.ts\0R100\0src/a.ts\0src/renamed.ts\0' +
      'C075\0src/x.ts\0src/y.ts\0T\0link\0';
    expect(parseLastCommit(output)).toEqual({
      sha: SHA,
      committedAt: 1767603600_000,
      message: 'refactor: sessions\n\nbody line',
      changedFiles: ['c.ts', 'new file.ts', 'src/y.ts', 'link'],
      renamedFiles: [{ from: 'src/a.ts', to: 'src/renamed.ts' }],
      deletedFiles: ['src/b.ts'],
    } satisfies LastCommit);
  });

  it('should read an empty commit and leave out paths it cannot place', () => {
    expect(parseLastCommit(`${SHA}\x1f1\x1fempty\n\0`)).toMatchObject({
      changedFiles: [],
      renamedFiles: [],
      deletedFiles: [],
      message: 'empty',
    });
    expect(parseLastCommit(`${SHA}\x1f1\x1fx\0\nM\0../out.ts\0D\0ok.ts\0`)).toMatchObject({
      changedFiles: [],
      deletedFiles: ['ok.ts'],
    });
  });

  it('should refuse output that is not a commit', () => {
    expect(() => parseLastCommit('')).toThrow(/unexpected git log output/);
    expect(() => parseLastCommit('fatal: not a git repository')).toThrow();
    expect(() => parseLastCommit(`${SHA}\x1fsoon\x1fx\0`)).toThrow();
  });
});

describe('hookCommitMade', () => {
  const commit: LastCommit = {
    sha: SHA,
    committedAt: 1_767_603_600_000,
    message: 'drop legacy cookie, token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB',
    changedFiles: ['src/auth/index.ts'],
    renamedFiles: [{ from: 'src/auth/session.ts', to: 'src/auth/sessions.ts' }],
    deletedFiles: ['src/auth/legacy.ts'],
  };
  const at = commit.committedAt + 1_500;

  it('should be a CommitMade of the session, its id from the session and the sha', () => {
    const event = hookCommitMade({ session_id: SESSION }, PROJECT, commit, at)!;
    expect(event).toMatchObject({
      type: 'CommitMade',
      tenantId: 'acme',
      projectId: 'shop',
      sessionId: SESSION,
      agentId: 'claude-code',
      timestamp: at,
      sha: SHA,
      changedFiles: ['src/auth/index.ts'],
      renamedFiles: [{ from: 'src/auth/session.ts', to: 'src/auth/sessions.ts' }],
      deletedFiles: ['src/auth/legacy.ts'],
      branch: 'fix/login',
    });
    expect(event.message).toContain('drop legacy cookie');
    expect(event.message).not.toContain('ghp_0123456789');
    // A retried hook (later, even) is the same event; another session's is not.
    expect(hookCommitMade({ session_id: SESSION }, PROJECT, commit, at + 60_000)!.eventId).toBe(
      event.eventId,
    );
    expect(hookCommitMade({ session_id: 'other' }, PROJECT, commit, at)!.eventId).not.toBe(
      event.eventId,
    );
  });

  it('should publish nothing for a HEAD older than the call', () => {
    expect(
      hookCommitMade({ session_id: SESSION }, PROJECT, commit, at + MAX_COMMIT_AGE_MS),
    ).toBeNull();
    expect(
      hookCommitMade({ session_id: SESSION }, PROJECT, { ...commit, message: '' }, at)!.message,
    ).toBeNull();
  });
});
