import { loadConfig } from '@engram/config';
import { PROPOSAL_STATUSES } from '@engram/contracts';
import { InvalidArgumentError, type Command } from 'commander';
import { ReviewRequestError, type ReviewErrorCode, type StatusFilter } from '@engram/app-distiller';
import {
  formatMemoryDecision,
  formatMemoryReviews,
  namesMemory,
  type MemoryReviewBackend,
  type MemoryToReview,
} from './memory-review';
import { tenantOfProject } from './memory-lifecycle';
import { DEFAULT_DATA_DIR } from './replay.command';
import {
  embeddedReviewBackend,
  grpcReviewBackend,
  reviewTenant,
  type ReviewBackend,
} from './review-backends';
import { formatDecision, formatProposals } from './review-format';
import { runReviewApply, type ReviewApplyAction } from './review-apply';

// The backends and the formatting live in their own modules; importers of this one keep working.
export { embeddedReviewBackend, grpcReviewBackend, type ReviewBackend } from './review-backends';
export { formatProposals } from './review-format';

/** Exit codes of `engram review` besides 0 (done) and 1 (anything unexpected). */
export const REVIEW_EXIT_CODES: Readonly<Record<ReviewErrorCode, number>> = {
  invalid: 2,
  'not-found': 3,
  conflict: 4,
  timeout: 5,
};

export type ReviewAction =
  | { kind: 'list'; project?: string; status: StatusFilter }
  | { kind: 'approve'; id: string; project?: string }
  | { kind: 'edit'; id: string; text: string; project?: string }
  | { kind: 'reject'; id: string; reason?: string; project?: string };

export interface ReviewRunOptions {
  tenant?: string;
  by?: string;
  json?: boolean;
}

/** The command's outcome: what to print, and the exit code. */
export interface ReviewRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Runs one `engram review` action against a backend (no printing, no process state: testable). */
export async function runReview(
  backend: ReviewBackend,
  action: ReviewAction,
  options: ReviewRunOptions,
): Promise<ReviewRun> {
  try {
    if (
      action.kind !== 'list' &&
      action.project !== undefined &&
      backend.memories &&
      namesMemory(action.id)
    ) {
      return await decideMemory(backend.memories, { ...action, project: action.project }, options);
    }
    const tenantId = await reviewTenant(backend, options.tenant);
    if (action.kind === 'list') {
      const proposals = await backend.list({
        tenantId,
        projectId: action.project ?? null,
        status: action.status,
      });
      const queue = await memoryQueue(backend, action, options.tenant ?? tenantId);
      const stdout = options.json
        ? JSON.stringify({
            tenant: tenantId,
            status: action.status,
            proposals,
            ...(queue.memories !== null && { memories: queue.memories }),
          })
        : formatProposals(proposals, action.status) +
          (queue.memories?.length ? `\n\n${formatMemoryReviews(queue.memories)}` : '');
      return { stdout, stderr: queue.note, exitCode: 0 };
    }
    const decision = await backend.decide({
      tenantId,
      proposalId: action.id,
      action: action.kind === 'edit' ? 'edit-and-approve' : action.kind,
      text: action.kind === 'edit' ? action.text : null,
      reason: action.kind === 'reject' ? (action.reason ?? null) : null,
      by: options.by ?? null,
    });
    const stdout = options.json ? JSON.stringify(decision) : formatDecision(decision);
    return { stdout, stderr: '', exitCode: 0 };
  } catch (error) {
    if (!(error instanceof ReviewRequestError)) throw error;
    return {
      stdout: '',
      stderr: `engram review: ${error.message}`,
      exitCode: REVIEW_EXIT_CODES[error.code],
    };
  }
}

/**
 * The project's memories waiting for review, when the backend has them and the listing is of a
 * project's pending (or all) items; null otherwise. A store that cannot be read is said in
 * `note` (stderr), the proposals still listed.
 */
async function memoryQueue(
  backend: ReviewBackend,
  action: { project?: string; status: StatusFilter },
  tenant: string,
): Promise<{ memories: MemoryToReview[] | null; note: string }> {
  const memories = backend.memories;
  if (!memories || action.project === undefined) return { memories: null, note: '' };
  if (action.status !== 'pending' && action.status !== 'all') return { memories: null, note: '' };
  try {
    const tenantId = await memoryTenant(memories, action.project, tenant || undefined);
    if (tenantId === null) return { memories: [], note: '' };
    return { memories: await memories.pending({ tenantId, projectId: action.project }), note: '' };
  } catch (error) {
    if (error instanceof ReviewRequestError) throw error;
    return {
      memories: null,
      note: `engram review: memories to review not listed: ${(error as Error).message}`,
    };
  }
}

/** approve | edit | reject of a memory id: Feedback CONFIRM | CORRECT | DELETE. */
async function decideMemory(
  memories: MemoryReviewBackend,
  action: Exclude<ReviewAction, { kind: 'list' }> & { project: string },
  options: ReviewRunOptions,
): Promise<ReviewRun> {
  const tenantId = await memoryTenant(memories, action.project, options.tenant);
  if (tenantId === null) {
    throw new ReviewRequestError('not-found', `no memories of project ${action.project}`);
  }
  const decision = await memories.decide({
    tenantId,
    projectId: action.project,
    memoryId: action.id,
    action: action.kind,
    text: action.kind === 'edit' ? action.text : null,
    by: options.by ?? null,
  });
  const stdout = options.json
    ? JSON.stringify({ memory: decision })
    : formatMemoryDecision(decision);
  return { stdout, stderr: '', exitCode: 0 };
}

function memoryTenant(
  memories: MemoryReviewBackend,
  projectId: string,
  tenant: string | undefined,
): Promise<string | null> {
  return tenantOfProject(
    memories,
    projectId,
    tenant,
    (message) => new ReviewRequestError('invalid', message),
  );
}

function statusOption(value: string): StatusFilter {
  const allowed: readonly string[] = [...PROPOSAL_STATUSES, 'all'];
  if (!allowed.includes(value)) {
    throw new InvalidArgumentError(`must be one of ${allowed.join(', ')}`);
  }
  return value as StatusFilter;
}

interface CommonOptions extends ReviewRunOptions {
  dataDir: string;
  distributed?: boolean;
  grpc?: string;
  url?: string;
  token?: string;
  waitSeconds?: string;
}

function withCommonOptions(command: Command): Command {
  return command
    .option('--tenant <id>', 'the tenant (default: the only one with proposals, or the token’s)')
    .option('--by <name>', 'the reviewer, recorded with the decision')
    .option('--json', 'print one JSON object')
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--wait-seconds <n>', 'embedded mode: how long to wait for the running distiller', '30')
    .option(
      '--grpc <host:port>',
      'use the review API (gRPC) at this address, which `engram start` serves in either mode; memories to review through the recall API (ENGRAM_RECALL_GRPC_URL)',
    )
    .option(
      '--distributed',
      'use the review API (gRPC) at --url or ENGRAM_REVIEW_GRPC_URL (either mode serves it), and the recall API at ENGRAM_RECALL_GRPC_URL for memories to review',
    )
    .option(
      '--url <host:port>',
      'with --distributed: the review API (default ENGRAM_REVIEW_GRPC_URL)',
    )
    .option(
      '--token <token>',
      'with --grpc/--distributed: a bearer token mapped to tenants (default ENGRAM_GRPC_TOKEN; deciding needs an admin token)',
    );
}

/** Where the gRPC client goes: --grpc, else --url, else ENGRAM_REVIEW_GRPC_URL. */
function reviewUrlOf(options: Pick<CommonOptions, 'grpc' | 'url'>): string {
  return options.grpc ?? options.url ?? loadConfig().distiller.reviewGrpcUrl;
}

async function execute(
  action: ReviewAction | ReviewApplyAction,
  options: CommonOptions,
): Promise<void> {
  const config = loadConfig();
  // --grpc/--distributed: proposals from the review API, the memories to review from the recall
  // API's ListForReview (no Elasticsearch or Kafka client here).
  const backend: ReviewBackend =
    options.grpc !== undefined || options.distributed
      ? grpcReviewBackend(reviewUrlOf(options), options.token ?? config.recall.token, {
          recallUrl: config.recall.grpcUrl,
        })
      : embeddedReviewBackend(options.dataDir, {
          timeoutMs: Number(options.waitSeconds ?? 30) * 1000,
        });
  try {
    const run =
      action.kind === 'apply'
        ? await runReviewApply(backend, action, options)
        : await runReview(backend, action, options);
    if (run.stdout !== '') console.log(run.stdout);
    if (run.stderr !== '') console.error(run.stderr);
    process.exitCode = run.exitCode;
  } finally {
    await backend.close();
  }
}

const EXIT_HELP = `
Exit codes: 0 done, 2 invalid request (apply: not a file change), 3 no such proposal,
4 already decided otherwise (apply: not approved), 5 queued but not yet recorded (is the
distiller running?), 1 anything else.`;

export function registerReviewCommand(program: Command): void {
  const review = program
    .command('review')
    .description(
      "the reflector's MEMORY.md proposals, the friction report's proposals (f-…), and inferred memories flagged needsReview: list, approve, edit then approve, reject; apply an approved file change",
    )
    .addHelpText('after', EXIT_HELP);
  withCommonOptions(review.command('list', { isDefault: true }))
    .description('list proposals (pending ones unless --status says)')
    .option('--project <id>', 'only this project (and list its memories flagged needsReview)')
    .option(
      '--status <status>',
      'pending | approved | rejected | expired | all',
      statusOption,
      'pending',
    )
    .action((options: CommonOptions & { project?: string; status: StatusFilter }) =>
      execute({ kind: 'list', project: options.project, status: options.status }, options),
    );
  const memoryProject = '--project <id>';
  const memoryProjectHelp = 'for a memory id (not p-…): the memory’s project';
  withCommonOptions(review.command('approve <id>'))
    .description(
      'approve a proposal: it becomes a user-verified memory (a memory id: Feedback CONFIRM)',
    )
    .option(memoryProject, memoryProjectHelp)
    .action((id: string, options: CommonOptions & { project?: string }) =>
      execute({ kind: 'approve', id, project: options.project }, options),
    );
  withCommonOptions(review.command('edit <id>'))
    .description(
      'approve a proposal with your text instead of the proposed one (a memory id: Feedback CORRECT)',
    )
    .requiredOption('--text <text>', 'the MEMORY.md line to keep')
    .option(memoryProject, memoryProjectHelp)
    .action((id: string, options: CommonOptions & { text: string; project?: string }) =>
      execute({ kind: 'edit', id, text: options.text, project: options.project }, options),
    );
  withCommonOptions(review.command('reject <id>'))
    .description('reject a proposal (nothing is promoted; a memory id: Feedback DELETE)')
    .option('--reason <text>', 'why, recorded in the review log')
    .option(memoryProject, memoryProjectHelp)
    .action((id: string, options: CommonOptions & { reason?: string; project?: string }) =>
      execute({ kind: 'reject', id, reason: options.reason, project: options.project }, options),
    );
  withCommonOptions(review.command('apply <id>'))
    .description(
      'write an approved friction proposal’s file change as a unified diff (`git apply` takes it)',
    )
    .option('--out <file>', 'write the diff there (default: stdout)')
    .option(
      '--repo <dir>',
      'the repository it applies to: the diff is made against its file (default: .)',
      '.',
    )
    .action((id: string, options: CommonOptions & { out?: string; repo: string }) =>
      execute({ kind: 'apply', id, out: options.out, repo: options.repo }, options),
    );
}
