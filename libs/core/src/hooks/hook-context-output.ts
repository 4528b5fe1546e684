/** What a hook prints back into the session: Claude Code's `additionalContext` output. */
/** Memory the hook should print back into the session (Claude Code `additionalContext`). */
export type HookMemoryRequest =
  | { kind: 'context'; hookEventName: 'SessionStart' | 'UserPromptSubmit'; query: string | null }
  | { kind: 'file'; hookEventName: 'PreToolUse'; toolName: string; filePath: string };

/** What awaits a person's review in a project (SessionStart's reminder). */
export interface PendingReviews {
  /** MEMORY.md (and friction) proposals awaiting a decision. */
  proposals: number;
  /** Inferred memories flagged needsReview. */
  memories: number;
  /** The memory count is a bounded listing's and the listing was full: "N+". */
  memoriesCapped?: boolean;
}

export const NO_PENDING_REVIEWS: PendingReviews = { proposals: 0, memories: 0 };

const count = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/**
 * SessionStart's reminder of what awaits review in the project (seed 001, issue #20): MEMORY.md
 * proposals and inferred memories, in one line when there are any, '' when there are none
 * (nothing is said about an empty queue). A number alone counts proposals.
 */
export function pendingReviewLine(pending: number | PendingReviews): string {
  const { proposals, memories, memoriesCapped } =
    typeof pending === 'number' ? { ...NO_PENDING_REVIEWS, proposals: pending } : pending;
  const p = count(proposals);
  const m = count(memories);
  const parts = [
    ...(p > 0 ? [`${p} MEMORY.md ${p === 1 ? 'proposal' : 'proposals'}`] : []),
    ...(m > 0
      ? [`${m}${memoriesCapped ? '+' : ''} inferred ${m === 1 ? 'memory' : 'memories'}`]
      : []),
  ];
  if (parts.length === 0) return '';
  const one = parts.length === 1 && (p === 1 || (m === 1 && !memoriesCapped));
  return (
    `Engram: ${parts.join(' and ')} ${one ? 'awaits' : 'await'} review for this project ` +
    '(`engram review` lists them).'
  );
}

/** Context and the review reminder, a blank line apart; either may be empty. */
export function withPendingReviewLine(context: string, pending: number | PendingReviews): string {
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
