import type { Proposal } from '@engram/contracts';
import { PROTO_LOADER_OPTIONS } from '@engram/contracts';

// The TypeScript side of schemas/proto/engram/review/v1/review.proto, as @grpc/proto-loader reads
// it with REVIEW_PROTO_LOADER_OPTIONS: camelCase fields, int64 as numbers (epoch millis fit a
// double exactly), defaults filled in.

export const REVIEW_PROTO_PACKAGE = 'engram.review.v1';

export const REVIEW_PROTO_LOADER_OPTIONS = PROTO_LOADER_OPTIONS;

export { reviewProtoPath } from '@engram/contracts';

export interface ScopeMessage {
  tenantId?: string;
  projectId?: string;
}

export interface ProposalMessage {
  proposalId: string;
  tenantId: string;
  projectId: string;
  section: string;
  title: string;
  text: string;
  status: string;
  evidenceMemoryIds: string[];
  evidenceEventIds: string[];
  evidenceSessionIds: string[];
  evidenceEpisodeIds: string[];
  createdAt: number;
  expiresAt: number;
  decidedAt: number;
  decidedBy: string;
  promotedMemoryId: string;
}

export interface ListRequestMessage {
  scope?: ScopeMessage;
  status?: string;
}

export interface ApproveRequestMessage {
  scope?: ScopeMessage;
  proposalId?: string;
  reviewer?: string;
}

export interface EditAndApproveRequestMessage extends ApproveRequestMessage {
  text?: string;
}

export interface RejectRequestMessage extends ApproveRequestMessage {
  reason?: string;
}

export interface DecisionResponseMessage {
  proposal: ProposalMessage;
  changed: boolean;
}

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
  };
}
