import type { Proposal } from '@engram/contracts';
import { PROTO_LOADER_OPTIONS } from '@engram/contracts';
import type { reviewv1 } from '@engram/grpc';

// The TypeScript side of schemas/proto/engram/review/v1/review.proto, as @grpc/proto-loader reads
// it with REVIEW_PROTO_LOADER_OPTIONS: camelCase fields, int64 as numbers (epoch millis fit a
// double exactly), defaults filled in. The messages' types are generated from the proto
// (`reviewv1`, npm run proto:types): a handler is given `X__Output`, and answers are built in
// that complete shape, so a field the proto adds or renames is a type error until it is mapped.

export const REVIEW_PROTO_PACKAGE = 'engram.review.v1';

export const REVIEW_PROTO_LOADER_OPTIONS = PROTO_LOADER_OPTIONS;

export { reviewProtoPath } from '@engram/contracts';

/** A proposal as the review API sends and its clients receive it. */
export type ProposalMessage = reviewv1.Proposal__Output;

/** A proposal record as the wire message (nulls become the proto3 defaults). */
export function proposalMessage(proposal: Proposal): ProposalMessage {
  return {
    proposalId: proposal.proposalId,
    tenantId: proposal.tenantId,
    projectId: proposal.projectId,
    section: proposal.section ?? '',
    title: proposal.title ?? '',
    text: proposal.text,
    status: proposal.status,
    evidenceMemoryIds: [...proposal.evidenceMemoryIds],
    evidenceEventIds: [...proposal.evidenceEventIds],
    evidenceSessionIds: [...proposal.evidenceSessionIds],
    evidenceEpisodeIds: [...proposal.evidenceEpisodeIds],
    createdAt: proposal.createdAt,
    expiresAt: proposal.expiresAt,
    decidedAt: proposal.decidedAt ?? 0,
    decidedBy:
      proposal.status === 'pending' || proposal.status === 'expired' ? '' : (proposal.userId ?? ''),
    promotedMemoryId: proposal.promotedMemoryId ?? '',
    kind: proposal.kind,
    target: proposal.target ?? '',
    severity: proposal.severity ?? 0,
  };
}
