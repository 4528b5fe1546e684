import type { reviewv1 } from '@engram/grpc';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ReviewRequestError } from '@engram/app-distiller';
import { toolErrorMessage, type CalledService } from './mcp-errors';
import { formatFeedback, formatRecall, formatRemembered, memoryMdOfProposals } from './mcp-format';
import {
  feedbackRequest,
  McpArgumentError,
  recallRequest,
  rememberRequest,
  type McpScope,
} from './mcp-requests';

// The MCP server's small decisions (issue #22): the gRPC requests a tool's arguments become, the
// message of a failed call, and the text of an answer.

const SCOPE: McpScope = {
  tenantId: 'acme',
  projectId: 'acme/api',
  agentId: 'codex',
  userId: null,
  sessionId: 'mcp-1',
};
const RECALL: CalledService = {
  name: 'recall API',
  url: '127.0.0.1:50051',
  urlVariable: 'ENGRAM_RECALL_GRPC_URL',
  tenantId: 'acme',
};
const grpcError = (code: number, details: string) =>
  Object.assign(new Error(`${code} ${details}`), { code, details });

describe('the requests of the tools', () => {
  it('should scope every request to the configured tenant and project', () => {
    expect(recallRequest(SCOPE, { query: 'auth', tier: 'memories', phase: 'validate' })).toEqual({
      scope: { tenantId: 'acme', projectId: 'acme/api' },
      query: 'auth',
      k: 0,
      tier: 'TIER_MEMORIES',
      phase: 'UNIVERSAL_PHASE_VALIDATE',
      memoryTypes: [],
      relatedFiles: [],
      sessionId: 'mcp-1',
    });
    expect(recallRequest(SCOPE, { query: 'q', k: 3, session_id: 's-9' })).toMatchObject({
      k: 3,
      tier: 'TIER_ALL',
      phase: 'UNIVERSAL_PHASE_UNSPECIFIED',
      sessionId: 's-9',
    });
  });

  it("should file remember as the agent's note, never a person's", () => {
    expect(rememberRequest(SCOPE, { text: 'Use the mutex' })).toEqual({
      scope: { tenantId: 'acme', projectId: 'acme/api' },
      sessionId: 'mcp-1',
      agentId: 'codex',
      text: 'Use the mutex',
      type: '',
      relatedFiles: [],
    });
  });

  it('should map feedback, and refuse a correction without its reason or content', () => {
    expect(
      feedbackRequest(SCOPE, {
        memory_id: 'm-1',
        action: 'correct',
        reason: 'duplicate',
        duplicate_of_memory_id: 'm-0',
      }),
    ).toMatchObject({
      action: 'FEEDBACK_ACTION_CORRECT',
      reason: 'CORRECTION_REASON_DUPLICATE',
      duplicateOfMemoryId: 'm-0',
    });
    expect(feedbackRequest(SCOPE, { memory_id: 'm-1', action: 'flag_wrong' })).toMatchObject({
      action: 'FEEDBACK_ACTION_FLAG_WRONG',
      reason: 'CORRECTION_REASON_UNSPECIFIED',
    });
    const refused = [
      [{ action: 'correct' }, /^reason: required/],
      [{ action: 'correct', reason: 'duplicate' }, /^duplicate_of_memory_id: required/],
      [{ action: 'correct', reason: 'outdated' }, /^corrected_content: required/],
      [{ action: 'delete', reason: 'outdated' }, /go with action "correct", not "delete"/],
    ] as const;
    for (const [args, message] of refused) {
      expect(() => feedbackRequest(SCOPE, { memory_id: 'm-1', ...args })).toThrow(message);
      expect(() => feedbackRequest(SCOPE, { memory_id: 'm-1', ...args })).toThrow(McpArgumentError);
    }
  });
});

describe('toolErrorMessage', () => {
  it('should name the setup problem behind UNAVAILABLE, UNAUTHENTICATED and PERMISSION_DENIED', () => {
    expect(
      toolErrorMessage(grpcError(status.UNAVAILABLE, 'No connection established'), RECALL),
    ).toBe(
      'engram start is not running at 127.0.0.1:50051 (recall API): start it with `engram start`, ' +
        'or point ENGRAM_RECALL_GRPC_URL at it (No connection established)',
    );
    expect(toolErrorMessage(grpcError(status.UNAUTHENTICATED, 'unknown token'), RECALL)).toMatch(
      /^the recall API at 127\.0\.0\.1:50051 refused the call \(unknown token\): set ENGRAM_GRPC_TOKEN/,
    );
    expect(toolErrorMessage(grpcError(status.PERMISSION_DENIED, 'needs admin'), RECALL)).toMatch(
      /denied the call \(needs admin\): .*acts for tenant "acme"/,
    );
  });

  it("should pass a refused request's reason on, and find the status under a wrapper", () => {
    expect(toolErrorMessage(grpcError(status.NOT_FOUND, 'no memory m-9'), RECALL)).toBe(
      'recall API: no memory m-9',
    );
    const wrapped = new Error('review API at x: down', {
      cause: grpcError(status.UNAVAILABLE, 'connect ECONNREFUSED'),
    });
    expect(toolErrorMessage(wrapped, RECALL)).toMatch(/^engram start is not running at /);
    expect(toolErrorMessage(new ReviewRequestError('conflict', 'already rejected'), RECALL)).toBe(
      'recall API: already rejected',
    );
    expect(toolErrorMessage(new Error('boom'), RECALL)).toBe(
      'the recall API at 127.0.0.1:50051 failed: boom',
    );
  });
});

describe('the answers as text', () => {
  it('should list recall results with their ids, the memories they replace and sources', () => {
    const text = formatRecall('auth', 'acme/api', {
      hydeUsed: false,
      embeddingModel: 'm',
      results: [
        {
          tier: 'TIER_MEMORIES',
          memory: { memoryId: 'm-1', type: 'gotcha' } as never,
          text: 'Hold the\n mutex',
          scores: { finalScore: 0.51234 } as never,
          provenance: { sessionIds: ['s-1'], episodeIds: ['e-1'] } as never,
          replaces: [
            {
              memoryId: 'm-0',
              content: '[STALE — file no longer exists] Lock\n the file',
              confidence: 0.3,
              reason: 'stale',
            },
          ],
        },
      ],
    });
    expect(text).toBe(
      [
        'recall "auth" in acme/api: 1 result',
        '1. [memory/gotcha] m-1 (0.5123) Hold the mutex',
        '   replaces: m-0 [STALE — file no longer exists] Lock the file',
        '   from sessions s-1 · episodes e-1',
      ].join('\n'),
    );
    expect(formatRecall('x', 'p', { results: [], hydeUsed: false, embeddingModel: '' })).toBe(
      'nothing recalled for "x" in p',
    );
  });

  it('should say what remember and feedback did', () => {
    expect(formatRemembered({ eventId: 'ev', memoryId: '', accepted: true })).toMatch(/^noted/);
    expect(formatRemembered({ eventId: 'ev', memoryId: 'm-2', accepted: true })).toBe(
      'remembered as memory m-2 (event ev)',
    );
    expect(formatFeedback({ memoryId: 'm', applied: true, confidence: 0.5, deleted: true })).toBe(
      'memory m deleted',
    );
  });

  it("should render MEMORY.md from the project's approved proposals, by section", () => {
    const p = (id: string, fields: Partial<reviewv1.Proposal__Output>) =>
      ({
        proposalId: id,
        projectId: 'acme/api',
        status: 'approved',
        section: 'Hard Rules',
        text: id,
        decidedAt: Date.UTC(2026, 1, 17),
        ...fields,
      }) as reviewv1.Proposal__Output;
    const markdown = memoryMdOfProposals('acme/api', [
      p('p-2', { text: 'Never commit .env', decidedAt: Date.UTC(2026, 1, 18) }),
      p('p-1', { text: 'Small commits', section: 'User' }),
      p('p-3', { status: 'pending' }),
      p('p-4', { projectId: 'other' }),
      // An approved friction proposal is a file change, not a MEMORY.md line.
      p('f-20260217-001', { kind: 'friction', section: 'tool-misuse:x', text: '--- a/AGENTS.md' }),
    ]);
    expect(markdown).toBe(
      [
        '# MEMORY — acme/api',
        '',
        '_Curated by Engram: 2 memories, last updated 2026-02-18._',
        '',
        '## User',
        '',
        '- (2026-02-17) Small commits',
        '',
        '## Hard Rules',
        '',
        '- (2026-02-18) Never commit .env',
        '',
        '## System Architecture',
        '',
        '_Nothing yet._',
        '',
        '## Patterns',
        '',
        '_Nothing yet._',
        '',
      ].join('\n'),
    );
  });
});
