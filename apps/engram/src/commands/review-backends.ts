import { loadConfig } from '@engram/config';
import { SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  distillerCodecs,
  prefixedDistillerTopics,
  ReviewDesk,
  ReviewRequestError,
  type DecisionRequest,
  type StatusFilter,
  ReviewGrpcClient,
  proposalMessage,
  type ProposalMessage,
} from '@engram/app-distiller';
import {
  grpcMemoryReviews,
  lifecycleMemoryReviews,
  type MemoryReviewBackend,
} from './memory-review';

/** What the command needs: the desk on the embedded log, or a review API (either mode's). */
export interface ReviewBackend {
  /** Tenants with proposals (embedded), to default --tenant; empty when the server decides. */
  tenants(): Promise<string[]>;
  list(query: {
    tenantId: string;
    projectId: string | null;
    status: StatusFilter;
  }): Promise<ProposalMessage[]>;
  decide(request: DecisionRequest): Promise<{ proposal: ProposalMessage; changed: boolean }>;
  /** One proposal of the tenant as it stands (`engram review apply`); not-found otherwise. */
  get(tenantId: string, proposalId: string): Promise<ProposalMessage>;
  /** Inferred memories flagged needsReview (issue #20); absent: proposals only. */
  memories?: MemoryReviewBackend | null;
  close(): Promise<void>;
}

/** Embedded: the desk on the SQLite log in the data directory (the running `engram start` decides). */
export function embeddedReviewBackend(
  dataDir: string,
  options: { timeoutMs?: number } = {},
): ReviewBackend {
  if (!existsSync(join(dataDir, 'events.db'))) {
    throw new Error(
      `no event log in ${dataDir} (--data-dir): run \`engram start\` and replay events first`,
    );
  }
  const config = loadConfig();
  const topics = prefixedDistillerTopics(config.topicPrefix);
  const log = SqliteEventLog.open({ dataDir });
  const started = log.topic(topics.proposals) !== undefined;
  const desk = new ReviewDesk(new SqliteEventLogAdapter(log), distillerCodecs(topics), {
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  const memories = lifecycleMemoryReviews({ dataDir });
  return {
    memories,
    tenants: () => (started ? desk.tenants() : Promise.resolve([])),
    async list(query) {
      if (!started || query.tenantId === '') return [];
      return (await desk.list(query)).map(proposalMessage);
    },
    async get(tenantId, proposalId) {
      if (!started || tenantId === '') throw notFound(proposalId, tenantId);
      return proposalMessage(await desk.get(tenantId, proposalId));
    },
    async decide(request) {
      if (!started || request.tenantId === '') {
        throw new ReviewRequestError(
          'not-found',
          `no proposal ${request.proposalId} (no reflection yet)`,
        );
      }
      const { proposal, changed } = await desk.decide(request);
      return { proposal: proposalMessage(proposal), changed };
    },
    async close() {
      await memories.close();
      log.close();
    },
  };
}

/**
 * The review API (engram.review.v1) over gRPC: the distiller's in distributed mode, or the one
 * `engram start` serves in embedded mode (both on ENGRAM_REVIEW_GRPC_URL). With `recallUrl`, the
 * inferred memories flagged needsReview too, through the recall API (ListForReview, Feedback).
 */
export function grpcReviewBackend(
  url: string,
  token?: string,
  options: { recallUrl?: string } = {},
): ReviewBackend {
  const client = new ReviewGrpcClient(url, { ...(token !== undefined && { token }) });
  const memories =
    options.recallUrl === undefined ? null : grpcMemoryReviews(options.recallUrl, token);
  const scope = (tenantId: string, projectId?: string | null) => ({
    tenantId,
    projectId: projectId ?? '',
  });
  return {
    memories,
    tenants: () => Promise.resolve([]),
    async list(query) {
      const { proposals } = await client.list({
        scope: scope(query.tenantId, query.projectId),
        status: query.status,
      });
      return proposals;
    },
    async get(tenantId, proposalId) {
      // The API has no Get: the tenant's proposals of every status, this one among them.
      const { proposals } = await client.list({ scope: scope(tenantId), status: 'all' });
      const proposal = proposals.find((p) => p.proposalId === proposalId);
      if (proposal === undefined) throw notFound(proposalId, tenantId);
      return proposal;
    },
    decide(request) {
      const base = {
        scope: scope(request.tenantId),
        proposalId: request.proposalId,
        reviewer: request.by ?? '',
      };
      switch (request.action) {
        case 'approve':
          return client.approve(base);
        case 'edit-and-approve':
          return client.editAndApprove({ ...base, text: request.text ?? '' });
        case 'reject':
          return client.reject({ ...base, reason: request.reason ?? '' });
      }
    },
    close: () => Promise.resolve(client.close()),
  };
}

function notFound(proposalId: string, tenantId: string): ReviewRequestError {
  return new ReviewRequestError(
    'not-found',
    `no proposal ${proposalId}${tenantId === '' ? '' : ` for tenant ${tenantId}`}`,
  );
}

/** --tenant, else the only tenant with proposals (embedded), else the server's choice (''). */
export async function reviewTenant(
  backend: ReviewBackend,
  tenant: string | undefined,
): Promise<string> {
  if (tenant !== undefined) return tenant;
  const tenants = await backend.tenants();
  if (tenants.length > 1) {
    throw new ReviewRequestError(
      'invalid',
      `several tenants have proposals (${tenants.join(', ')}): pass --tenant`,
    );
  }
  // None: the server decides from the token (distributed), or there is nothing yet (embedded).
  return tenants[0] ?? '';
}
