import type { reviewv1 } from '@engram/grpc';
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  status,
  type CallOptions,
  type requestCallback,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReviewRequestError, type ReviewErrorCode } from './review-desk';
import { REVIEW_PROTO_LOADER_OPTIONS, reviewProtoPath } from './review-proto';

/** A decision as the server always answers it: with the proposal as decided. */
export type ReviewDecision = reviewv1.DecisionResponse__Output & {
  proposal: reviewv1.Proposal__Output;
};

const CODES: Partial<Record<number, ReviewErrorCode>> = {
  [status.INVALID_ARGUMENT]: 'invalid',
  [status.NOT_FOUND]: 'not-found',
  [status.FAILED_PRECONDITION]: 'conflict',
  [status.DEADLINE_EXCEEDED]: 'timeout',
};

/**
 * A client of engram.review.v1 (the distiller's review API), for `engram review --distributed`.
 * The server's statuses come back as the desk's ReviewRequestError codes, so the command maps
 * both modes to the same exit codes.
 */
export class ReviewGrpcClient {
  private readonly stub: reviewv1.ReviewClient;

  constructor(
    readonly url: string,
    private readonly options: { token?: string; deadlineMs?: number } = {},
  ) {
    const definition = loadSync(reviewProtoPath(), { ...REVIEW_PROTO_LOADER_OPTIONS });
    const loaded = loadPackageDefinition(definition) as unknown as reviewv1.ProtoGrpcType;
    this.stub = new loaded.engram.review.v1.Review(url, credentials.createInsecure());
  }

  list(request: reviewv1.ListRequest): Promise<reviewv1.ListResponse__Output> {
    return this.call((m, o, done) => this.stub.List(request, m, o, done));
  }

  approve(request: reviewv1.ApproveRequest): Promise<ReviewDecision> {
    return this.decision(this.call((m, o, done) => this.stub.Approve(request, m, o, done)));
  }

  editAndApprove(request: reviewv1.EditAndApproveRequest): Promise<ReviewDecision> {
    return this.decision(this.call((m, o, done) => this.stub.EditAndApprove(request, m, o, done)));
  }

  reject(request: reviewv1.RejectRequest): Promise<ReviewDecision> {
    return this.decision(this.call((m, o, done) => this.stub.Reject(request, m, o, done)));
  }

  close(): void {
    this.stub.close();
  }

  /** proto3 lets a message field be absent; the review API always sends the proposal. */
  private async decision(answer: Promise<reviewv1.DecisionResponse__Output>) {
    const { proposal, changed } = await answer;
    if (proposal === null) {
      throw new Error(`review API at ${this.url}: a decision without its proposal`);
    }
    return { proposal, changed };
  }

  private call<Res>(
    rpc: (metadata: Metadata, options: CallOptions, done: requestCallback<Res>) => void,
  ): Promise<Res> {
    const metadata = new Metadata();
    if (this.options.token) metadata.set('authorization', `Bearer ${this.options.token}`);
    const deadline = Date.now() + (this.options.deadlineMs ?? 90_000);
    return new Promise((resolve, reject) => {
      rpc(metadata, { deadline }, (error, response) => {
        if (error === null) return resolve(response as Res);
        const code = CODES[error.code];
        reject(
          code === undefined
            ? new Error(`review API at ${this.url}: ${error.details || error.message}`, {
                cause: error,
              })
            : new ReviewRequestError(code, error.details || error.message),
        );
      });
    });
  }
}
