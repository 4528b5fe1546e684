import {
  credentials,
  loadPackageDefinition,
  Metadata,
  status,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReviewRequestError, type ReviewErrorCode } from './review-desk';
import {
  REVIEW_PROTO_LOADER_OPTIONS,
  reviewProtoPath,
  type ApproveRequestMessage,
  type DecisionResponseMessage,
  type EditAndApproveRequestMessage,
  type ListRequestMessage,
  type ProposalMessage,
  type RejectRequestMessage,
} from './review-proto';

type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, response: Res) => void,
) => void;

interface ReviewStub extends Client {
  List: Unary<ListRequestMessage, { proposals: ProposalMessage[] }>;
  Approve: Unary<ApproveRequestMessage, DecisionResponseMessage>;
  EditAndApprove: Unary<EditAndApproveRequestMessage, DecisionResponseMessage>;
  Reject: Unary<RejectRequestMessage, DecisionResponseMessage>;
}

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
  private readonly stub: ReviewStub;

  constructor(
    readonly url: string,
    private readonly options: { token?: string; deadlineMs?: number } = {},
  ) {
    const definition = loadSync(reviewProtoPath(), { ...REVIEW_PROTO_LOADER_OPTIONS });
    const loaded = loadPackageDefinition(definition) as unknown as {
      engram: { review: { v1: { Review: new (url: string, creds: unknown) => ReviewStub } } };
    };
    this.stub = new loaded.engram.review.v1.Review(url, credentials.createInsecure());
  }

  list(request: ListRequestMessage): Promise<{ proposals: ProposalMessage[] }> {
    return this.call(this.stub.List, request);
  }

  approve(request: ApproveRequestMessage): Promise<DecisionResponseMessage> {
    return this.call(this.stub.Approve, request);
  }

  editAndApprove(request: EditAndApproveRequestMessage): Promise<DecisionResponseMessage> {
    return this.call(this.stub.EditAndApprove, request);
  }

  reject(request: RejectRequestMessage): Promise<DecisionResponseMessage> {
    return this.call(this.stub.Reject, request);
  }

  close(): void {
    this.stub.close();
  }

  private call<Req, Res>(method: Unary<Req, Res>, request: Req): Promise<Res> {
    const metadata = new Metadata();
    if (this.options.token) metadata.set('authorization', `Bearer ${this.options.token}`);
    const deadline = Date.now() + (this.options.deadlineMs ?? 90_000);
    return new Promise((resolve, reject) => {
      method.call(this.stub, request, metadata, { deadline }, (error, response) => {
        if (error === null) return resolve(response);
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
