import type { recallv1 } from '@engram/grpc';
import { z } from 'zod';

// The MCP tools' arguments (zod shapes: the SDK publishes them as JSON Schema and validates every
// call against them) and the gRPC requests they become, scoped to the tenant and project the
// server was configured for: no tool takes a tenant or a project, so an agent cannot reach
// another's memory by asking. Pure.

/** Who the MCP server acts for (from its configuration, fixed for the process). */
export interface McpScope {
  tenantId: string;
  projectId: string;
  /** The agentId of remember (an agent's note, not a person's lesson). */
  agentId: string;
  /** Sent with feedback, when configured (--user). */
  userId: string | null;
  /** The session of calls that name none (one per server process). */
  sessionId: string;
  /**
   * The working tree (absolute), when known: what the tools return is checked against it — a
   * memory about files that are all gone is left out of context and marked stale in a recall.
   */
  projectRoot?: string;
}

/** An argument combination a tool refuses before calling anything; the message names the field. */
export class McpArgumentError extends Error {}

export const PHASES = ['define', 'implement', 'validate', 'refine', 'explore', 'reflect'] as const;
export const TIERS = ['all', 'memories', 'episodes', 'turns'] as const;
export const FEEDBACK_ACTIONS = ['confirm', 'correct', 'flag_wrong', 'delete'] as const;
export const CORRECTION_REASONS = ['inaccurate', 'outdated', 'too_specific', 'duplicate'] as const;
export const REVIEW_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'all'] as const;

const text = (what: string) => z.string().trim().min(1).describe(what);
const session = z
  .string()
  .trim()
  .min(1)
  .optional()
  .describe("the agent's session id (default: one per MCP server process)");
const phase = z.enum(PHASES).optional().describe('the work phase, to weight memory types');

export const recallArgs = {
  query: text('what to recall'),
  k: z.number().int().min(1).max(50).optional().describe('how many results (default 10)'),
  tier: z.enum(TIERS).optional().describe('memories, episodes, turns or all (default)'),
  phase,
  memory_types: z.array(z.string().min(1)).optional().describe('only these memory types'),
  related_files: z.array(z.string().min(1)).optional().describe('prefer memories about these'),
  session_id: session,
};
export const buildContextArgs = {
  query: text('the request to assemble context for'),
  token_budget: z.number().int().min(50).max(32_000).optional().describe('default: the server’s'),
  phase,
  session_id: session,
};
export const injectForFileArgs = {
  file_path: text('the file about to be read or edited'),
  tool_name: z.string().trim().min(1).optional().describe('Read, Edit, Write, … (default Read)'),
  session_id: session,
};
export const rememberArgs = {
  text: text('what to remember, one self-contained statement'),
  type: z.string().trim().min(1).optional().describe('a memory type (default: from the text)'),
  related_files: z.array(z.string().min(1)).optional().describe('files it is about'),
  session_id: session,
};
export const feedbackArgs = {
  memory_id: text('the memory (an id recall returned)'),
  action: z.enum(FEEDBACK_ACTIONS),
  reason: z.enum(CORRECTION_REASONS).optional().describe('with correct'),
  corrected_content: z.string().trim().min(1).optional().describe('with correct (not duplicate)'),
  duplicate_of_memory_id: z.string().trim().min(1).optional().describe('with correct duplicate'),
};
export const neighborsArgs = {
  file_path: text('the file'),
  k: z.number().int().min(1).max(50).optional().describe('how many neighbours (default 5)'),
};
export const episodeChainArgs = { episode_id: text('the episode (an id recall returned)') };
export const reviewListArgs = {
  status: z.enum(REVIEW_STATUSES).optional().describe('default pending'),
};
export const reviewApproveArgs = {
  proposal_id: text('p-YYYYMMDD-NNN, from review_list'),
  text: z.string().trim().min(1).optional().describe('approve this text instead of the proposed'),
  reviewer: z.string().trim().min(1).optional().describe('who decides'),
};
export const reviewRejectArgs = {
  proposal_id: text('p-YYYYMMDD-NNN, from review_list'),
  reason: z.string().trim().min(1).optional(),
  reviewer: z.string().trim().min(1).optional(),
};

type Args<S extends z.ZodRawShape> = z.infer<z.ZodObject<S>>;

function scopeOf(scope: McpScope): recallv1.Scope {
  return { tenantId: scope.tenantId, projectId: scope.projectId };
}

function phaseOf(value: (typeof PHASES)[number] | undefined): recallv1.UniversalPhase {
  return value === undefined
    ? 'UNIVERSAL_PHASE_UNSPECIFIED'
    : (`UNIVERSAL_PHASE_${value.toUpperCase()}` as recallv1.UniversalPhase);
}

export function recallRequest(scope: McpScope, a: Args<typeof recallArgs>): recallv1.RecallRequest {
  return {
    scope: scopeOf(scope),
    query: a.query,
    k: a.k ?? 0,
    tier: `TIER_${(a.tier ?? 'all').toUpperCase()}` as recallv1.Tier,
    phase: phaseOf(a.phase),
    memoryTypes: a.memory_types ?? [],
    relatedFiles: a.related_files ?? [],
    sessionId: a.session_id ?? scope.sessionId,
  };
}

export function buildContextRequest(
  scope: McpScope,
  a: Args<typeof buildContextArgs>,
): recallv1.BuildContextRequest {
  return {
    scope: scopeOf(scope),
    sessionId: a.session_id ?? scope.sessionId,
    query: a.query,
    phase: phaseOf(a.phase),
    tokenBudget: a.token_budget ?? 0,
  };
}

export function injectForFileRequest(
  scope: McpScope,
  a: Args<typeof injectForFileArgs>,
): recallv1.InjectForFileRequest {
  return {
    scope: scopeOf(scope),
    sessionId: a.session_id ?? scope.sessionId,
    filePath: a.file_path,
    toolName: a.tool_name ?? 'Read',
  };
}

/** An agent's note: agentId set, so the server files it as the agent's, never a person's. */
export function rememberRequest(
  scope: McpScope,
  a: Args<typeof rememberArgs>,
): recallv1.RememberRequest {
  return {
    scope: scopeOf(scope),
    sessionId: a.session_id ?? scope.sessionId,
    agentId: scope.agentId,
    text: a.text,
    type: a.type ?? '',
    relatedFiles: a.related_files ?? [],
  };
}

/** Feedback; `correct` needs a reason, and the reason's field (content, or the duplicate's id). */
export function feedbackRequest(
  scope: McpScope,
  a: Args<typeof feedbackArgs>,
): recallv1.FeedbackRequest {
  const correcting = a.action === 'correct';
  if (!correcting && (a.reason || a.corrected_content || a.duplicate_of_memory_id)) {
    throw new McpArgumentError(
      `reason, corrected_content and duplicate_of_memory_id go with action "correct", not "${a.action}"`,
    );
  }
  if (correcting && a.reason === undefined) {
    throw new McpArgumentError(
      `reason: required with action "correct" (${CORRECTION_REASONS.join(', ')})`,
    );
  }
  if (a.reason === 'duplicate' && !a.duplicate_of_memory_id) {
    throw new McpArgumentError('duplicate_of_memory_id: required with reason "duplicate"');
  }
  if (correcting && a.reason !== 'duplicate' && !a.corrected_content) {
    throw new McpArgumentError(`corrected_content: required with reason "${a.reason}"`);
  }
  return {
    scope: scopeOf(scope),
    memoryId: a.memory_id,
    action: `FEEDBACK_ACTION_${a.action.toUpperCase()}` as recallv1.FeedbackAction,
    reason:
      `CORRECTION_REASON_${(a.reason ?? 'unspecified').toUpperCase()}` as recallv1.CorrectionReason,
    correctedContent: a.corrected_content ?? '',
    duplicateOfMemoryId: a.duplicate_of_memory_id ?? '',
    userId: scope.userId ?? '',
  };
}

export function neighborsRequest(
  scope: McpScope,
  a: Args<typeof neighborsArgs>,
): recallv1.GetFileNeighborsRequest {
  return { scope: scopeOf(scope), filePath: a.file_path, k: a.k ?? 0 };
}

export function episodeChainRequest(
  scope: McpScope,
  a: Args<typeof episodeChainArgs>,
): recallv1.GetEpisodeChainRequest {
  return { scope: scopeOf(scope), episodeId: a.episode_id };
}
