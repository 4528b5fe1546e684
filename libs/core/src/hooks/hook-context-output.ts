/** What a hook prints back into the session: Claude Code's `additionalContext` output. */
/** Memory the hook should print back into the session (Claude Code `additionalContext`). */
export type HookMemoryRequest =
  | { kind: 'context'; hookEventName: 'SessionStart' | 'UserPromptSubmit'; query: string | null }
  | { kind: 'file'; hookEventName: 'PreToolUse'; toolName: string; filePath: string };

/**
 * SessionStart's reminder of the project's proposals awaiting review (seed 001, issue #20): one
 * line when there are any, '' when there are none (nothing is said about an empty queue).
 */
export function pendingReviewLine(pending: number): string {
  if (!Number.isFinite(pending) || pending <= 0) return '';
  const n = Math.floor(pending);
  return (
    `Engram: ${n} MEMORY.md ${n === 1 ? 'proposal awaits' : 'proposals await'} review for this ` +
    'project (`engram review` lists them).'
  );
}

/** Context and the review reminder, a blank line apart; either may be empty. */
export function withPendingReviewLine(context: string, pending: number): string {
  const line = pendingReviewLine(pending);
  if (line === '') return context;
  return context.trim() === '' ? line : `${context}\n\n${line}`;
}

/** Claude Code's JSON output carrying `additionalContext` for the hook event (or null). */
export function hookContextOutput(
  hookEventName: HookMemoryRequest['hookEventName'],
  additionalContext: string,
): string | null {
  if (additionalContext.trim() === '') return null;
  return JSON.stringify({ hookSpecificOutput: { hookEventName, additionalContext } });
}
