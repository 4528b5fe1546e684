import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CalledService } from './mcp-errors';
import { toolErrorMessage } from './mcp-errors';
import {
  formatDecision,
  formatEpisodeChain,
  formatFeedback,
  formatNeighbors,
  formatRecall,
  formatRemembered,
  formatRendered,
} from './mcp-format';
import type { EngramGrpc } from './mcp-grpc';
import { contextChecked, injectionChecked, recallChecked } from './mcp-working-tree';
import {
  buildContextArgs,
  buildContextRequest,
  episodeChainArgs,
  episodeChainRequest,
  feedbackArgs,
  feedbackRequest,
  injectForFileArgs,
  injectForFileRequest,
  McpArgumentError,
  neighborsArgs,
  neighborsRequest,
  recallArgs,
  recallRequest,
  rememberArgs,
  rememberRequest,
  reviewApproveArgs,
  reviewListArgs,
  reviewRejectArgs,
  type McpScope,
} from './mcp-requests';
import { formatProposals } from '../commands/review.command';

/** What the tools call, for whom, and how the services are named in their errors. */
export interface McpToolDeps {
  grpc: EngramGrpc;
  scope: McpScope;
  services: { recall: CalledService; review: CalledService };
}

/** The tools' names, in the order they are listed. */
export const ENGRAM_TOOLS = [
  'recall',
  'build_context',
  'inject_for_file',
  'remember',
  'feedback',
  'neighbors',
  'episode_chain',
  'review_list',
  'review_approve',
  'review_reject',
] as const;

/**
 * Runs one tool: its text, or — when the arguments are refused or the call fails — a result with
 * isError and a message saying why (mcp-errors.ts), so the agent sees it and the session goes on.
 */
export async function toolResult(
  service: CalledService,
  run: () => Promise<string>,
): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: await run() }] };
  } catch (error) {
    const text =
      error instanceof McpArgumentError ? error.message : toolErrorMessage(error, service);
    return { content: [{ type: 'text', text }], isError: true };
  }
}

const READ = { readOnlyHint: true, openWorldHint: false } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

export function registerEngramTools(server: McpServer, deps: McpToolDeps): void {
  const { grpc, scope } = deps;
  const recall = (run: () => Promise<string>) => toolResult(deps.services.recall, run);
  const review = (run: () => Promise<string>) => toolResult(deps.services.review, run);
  const reviewScope = { tenantId: scope.tenantId, projectId: scope.projectId };
  // The review API finds a decision's proposal by id in the whole tenant: this server decides
  // only on its own project's.
  const ofThisProject = async (proposalId: string) => {
    const { proposals } = await grpc.review.list({ scope: reviewScope, status: 'all' });
    if (!proposals.some((p) => p.proposalId === proposalId)) {
      throw new McpArgumentError(`no proposal ${proposalId} in project ${scope.projectId}`);
    }
  };

  server.registerTool(
    'recall',
    {
      description: `Search this project's memory (${scope.projectId}): memories, past episodes and turns, best first, each with its id and provenance.`,
      inputSchema: recallArgs,
      annotations: READ,
    },
    (a) =>
      recall(async () =>
        formatRecall(
          a.query,
          scope.projectId,
          recallChecked(await grpc.recall.recall(recallRequest(scope, a)), scope),
        ),
      ),
  );
  server.registerTool(
    'build_context',
    {
      description:
        'Memory context for a request: the current thread, the latest work state, relevant memories and recipes, within a token budget, each with a citation id.',
      inputSchema: buildContextArgs,
      annotations: READ,
    },
    (a) =>
      recall(async () => {
        const context = await grpc.recall.buildContext(buildContextRequest(scope, a));
        return formatRendered(contextChecked(context, scope), `no memory context for "${a.query}"`);
      }),
  );
  server.registerTool(
    'inject_for_file',
    {
      description:
        'Proven gotchas, error patterns and dead ends about a file, before reading or editing it (at most 4).',
      inputSchema: injectForFileArgs,
      annotations: READ,
    },
    (a) =>
      recall(async () => {
        const selection = await grpc.recall.injectForFile(injectForFileRequest(scope, a));
        return formatRendered(injectionChecked(selection, scope), `no memory about ${a.file_path}`);
      }),
  );
  server.registerTool(
    'remember',
    {
      description:
        'Note something worth remembering for later sessions of this project (a gotcha, a decision, a fix). It becomes a memory once validated.',
      inputSchema: rememberArgs,
      annotations: WRITE,
    },
    (a) =>
      recall(async () => formatRemembered(await grpc.recall.remember(rememberRequest(scope, a)))),
  );
  server.registerTool(
    'feedback',
    {
      description:
        'Feedback on a memory recall returned: confirm, correct (with a reason), flag_wrong or delete.',
      inputSchema: feedbackArgs,
      annotations: { ...WRITE, destructiveHint: true },
    },
    (a) =>
      recall(async () => formatFeedback(await grpc.recall.feedback(feedbackRequest(scope, a)))),
  );
  server.registerTool(
    'neighbors',
    {
      description: 'The files a session that touches this file usually touches next.',
      inputSchema: neighborsArgs,
      annotations: READ,
    },
    (a) =>
      recall(async () =>
        formatNeighbors(await grpc.recall.getFileNeighbors(neighborsRequest(scope, a))),
      ),
  );
  server.registerTool(
    'episode_chain',
    {
      description: 'The chain of earlier episodes an episode continues, root first.',
      inputSchema: episodeChainArgs,
      annotations: READ,
    },
    (a) =>
      recall(async () =>
        formatEpisodeChain(
          a.episode_id,
          await grpc.recall.getEpisodeChain(episodeChainRequest(scope, a)),
        ),
      ),
  );
  server.registerTool(
    'review_list',
    {
      description: "The project's MEMORY.md proposals (pending unless status says), by section.",
      inputSchema: reviewListArgs,
      annotations: READ,
    },
    (a) =>
      review(async () => {
        const status = a.status ?? 'pending';
        const { proposals } = await grpc.review.list({ scope: reviewScope, status });
        return formatProposals(proposals, status);
      }),
  );
  server.registerTool(
    'review_approve',
    {
      description:
        'Approve a MEMORY.md proposal (with text: approve that text instead); needs an admin token.',
      inputSchema: reviewApproveArgs,
      annotations: WRITE,
    },
    (a) =>
      review(async () => {
        await ofThisProject(a.proposal_id);
        const base = { scope: reviewScope, proposalId: a.proposal_id, reviewer: a.reviewer ?? '' };
        return formatDecision(
          a.text === undefined
            ? await grpc.review.approve(base)
            : await grpc.review.editAndApprove({ ...base, text: a.text }),
        );
      }),
  );
  server.registerTool(
    'review_reject',
    {
      description: 'Reject a MEMORY.md proposal, with a reason; needs an admin token.',
      inputSchema: reviewRejectArgs,
      annotations: WRITE,
    },
    (a) =>
      review(async () => {
        await ofThisProject(a.proposal_id);
        return formatDecision(
          await grpc.review.reject({
            scope: reviewScope,
            proposalId: a.proposal_id,
            reason: a.reason ?? '',
            reviewer: a.reviewer ?? '',
          }),
        );
      }),
  );
}
