import type { Memory } from '@engram/contracts';
import {
  InvalidRecallRequestError,
  memoriesToReview,
  REVIEW_QUEUE_FILTERS,
  reviewReason,
} from '@engram/core';
import { memoryFromSource, type MemoryDocument } from '@engram/core';
import type { RecallStore } from './recall-store';

export interface ReviewQueueRequest {
  tenantId: string;
  projectId: string;
  /** 0 = REVIEW_PAGE_DEFAULT; at most REVIEW_PAGE_MAX. */
  limit?: number;
  /** '' = the first page; else a previous answer's nextPageToken. */
  pageToken?: string;
}

export interface ReviewQueueItem {
  memoryId: string;
  type: string;
  content: string;
  confidence: number;
  source: string;
  reason: string;
  relatedFiles: string[];
  createdAtMs: number;
  updatedAtMs: number;
}

export interface ReviewQueuePage {
  memories: ReviewQueueItem[];
  /** '' when this page is the last. */
  nextPageToken: string;
}

export const REVIEW_PAGE_DEFAULT = 50;
export const REVIEW_PAGE_MAX = 500;
/** How deep the pages go: the store's result window (Elasticsearch's 10k). */
const REVIEW_WINDOW = 10_000;

/**
 * ListForReview (issue #20): the project's memories flagged needsReview that nobody confirmed,
 * newest first, a page at a time. One filtered listing of the store (needsReview, not
 * user-verified) bounded by the page's end, so counting the first 100 costs one small query.
 * The page token is the offset of the next page in that order (memories flagged or confirmed
 * between two pages may shift it by as many: a queue for people, not a ledger).
 */
export class ReviewQueueService {
  constructor(private readonly store: Pick<RecallStore, 'list'>) {}

  async listForReview(request: ReviewQueueRequest): Promise<ReviewQueuePage> {
    if (!request.projectId) {
      throw new InvalidRecallRequestError('scope.projectId', 'the review queue is of one project');
    }
    const limit = pageLimit(request.limit ?? 0);
    const offset = pageOffset(request.pageToken ?? '');
    const end = Math.min(offset + limit, REVIEW_WINDOW);
    // One more than the page's end: whether a next page exists.
    const size = Math.min(end + 1, REVIEW_WINDOW);
    const listed = await this.store.list<MemoryDocument>('memories', {
      scope: { tenantId: request.tenantId, projectId: request.projectId },
      filter: REVIEW_QUEUE_FILTERS,
      size,
    });
    const queue = memoriesToReview(listed.map(({ source }) => memoryFromSource(source)));
    const more = listed.length === size && end < REVIEW_WINDOW;
    return {
      memories: queue.slice(offset, end).map(reviewItem),
      nextPageToken: more || queue.length > end ? String(end) : '',
    };
  }
}

function reviewItem(memory: Memory): ReviewQueueItem {
  return {
    memoryId: memory.memoryId,
    type: memory.memoryType,
    content: memory.content,
    confidence: memory.confidence,
    source: memory.source,
    reason: reviewReason(memory),
    relatedFiles: memory.relatedFiles,
    createdAtMs: memory.createdAt,
    updatedAtMs: memory.timestamp,
  };
}

function pageLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 0) {
    throw new InvalidRecallRequestError('limit', `must be a count, not ${limit}`);
  }
  return Math.min(limit === 0 ? REVIEW_PAGE_DEFAULT : limit, REVIEW_PAGE_MAX);
}

function pageOffset(token: string): number {
  if (token === '') return 0;
  const offset = Number(token);
  if (!/^\d+$/.test(token) || offset >= REVIEW_WINDOW) {
    throw new InvalidRecallRequestError('pageToken', `"${token}" is not a page of this queue`);
  }
  return offset;
}
