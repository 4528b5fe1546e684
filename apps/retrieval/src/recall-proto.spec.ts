import { status } from '@grpc/grpc-js';
import {
  DownstreamUnavailableError,
  InvalidRecallRequestError,
  memoryProvenance,
  parseRecallRequest,
  TenantAccessError,
  type ScoreComponents,
} from '@engram/core';
import { describe, expect, it } from 'vitest';
import {
  recallRequestAsGiven,
  recallResponseAsReceived,
} from '../../../libs/grpc/src/testing/received-message';
import { grpcStatusOf } from './recall-errors';
import {
  grpcFieldName,
  phaseFromEnum,
  recallInputFromMessage,
  recallResponseMessage,
  tierFromEnum,
  tierToEnum,
} from './recall-proto';
import type { RecallHit } from './recall-tier-ranking';
import { memoryRecord } from './testing/records';

describe('recall.proto mapping', () => {
  it('should read the enums', () => {
    expect(phaseFromEnum('UNIVERSAL_PHASE_VALIDATE')).toBe('validate');
    expect(phaseFromEnum('UNIVERSAL_PHASE_UNSPECIFIED')).toBeUndefined();
    expect(phaseFromEnum(undefined)).toBeUndefined();
    expect(tierFromEnum('TIER_EPISODES')).toBe('episodes');
    expect(tierFromEnum('TIER_ALL')).toBe('all');
    expect(tierFromEnum('TIER_UNSPECIFIED')).toBe('all');
    expect(tierFromEnum(9)).toBe('9');
    expect(tierToEnum('turns')).toBe('TIER_TURNS');
  });

  it('should turn a request message into core input, with the resolved tenant', () => {
    expect(
      recallInputFromMessage(
        recallRequestAsGiven('Recall', {
          scope: { tenantId: 'ignored', projectId: 'api' },
          query: 'q',
          phase: 'UNIVERSAL_PHASE_REFINE',
          k: 0,
          tier: 'TIER_MEMORIES',
          memoryTypes: ['gotcha'],
          relatedFiles: [],
          sessionId: 's1',
          temporal: 'aroundEvent',
          aroundEvent: { timeMs: 100, windowMs: 10 },
          excludeStale: true,
        }),
        'acme',
      ),
    ).toEqual({
      tenantId: 'acme',
      projectId: 'api',
      query: 'q',
      phase: 'refine',
      k: 0,
      tier: 'memories',
      memoryTypes: ['gotcha'],
      relatedFiles: [],
      temporal: { mode: 'around_event', timeMs: 100, windowMs: 10 },
      excludeStale: true,
      sessionId: 's1',
      track: true,
    });
    const given = (request: Parameters<typeof recallRequestAsGiven<'Recall'>>[1]) =>
      recallRequestAsGiven('Recall', request);
    expect(recallInputFromMessage(given({}), '')).toMatchObject({ projectId: '', temporal: null });
    expect(recallInputFromMessage(given({ noTrack: true }), 't').track).toBe(false);
    expect(recallInputFromMessage(given({ recentSessions: { n: 2 } }), 't').temporal).toEqual({
      mode: 'recent_sessions',
      n: 2,
    });
  });

  it('should name fields as recall.proto does', () => {
    expect(grpcFieldName('projectId')).toBe('scope.project_id');
    expect(grpcFieldName('tenantId')).toBe('scope.tenant_id');
    expect(grpcFieldName('memoryTypes[1]')).toBe('memory_types[1]');
    expect(grpcFieldName('timeWindow.fromMs')).toBe('time_window.from_ms');
    expect(grpcFieldName('query')).toBe('query');
  });
});

describe('recallResponseMessage', () => {
  it('should send the memories a result replaces, as a client receives them', () => {
    const current = memoryRecord({ memoryId: 'm-new', content: 'refresh runs in the queue' });
    const score = { finalScore: 0.7 } as ScoreComponents;
    const replaced = {
      memoryId: 'm-old',
      content: '[SUPERSEDED — a newer memory replaces it] refresh holds the mutex',
      confidence: 0.4,
      reason: 'superseded' as const,
    };
    const hit: RecallHit = {
      tier: 'memories',
      id: current.memoryId,
      score,
      text: current.content,
      explanation: '',
      provenance: memoryProvenance(current),
      memory: {
        memory: current,
        content: current.content,
        confidence: current.confidence,
        stale: false,
        score,
        provenance: memoryProvenance(current),
      },
      replaces: [replaced],
    };
    const answer = {
      query: parseRecallRequest({ tenantId: 'acme', projectId: 'acme/api', query: 'refresh' }),
      results: [hit, { ...hit, replaces: undefined }],
      embeddingModel: 'fake@1',
      hyde: null,
      timings: { embedMs: 0, hydeMs: 0, searchMs: 0, rankMs: 0, totalMs: 0 },
    };
    const received = recallResponseAsReceived('Recall', recallResponseMessage(answer));
    expect(received.results.map((r) => r.replaces)).toEqual([[replaced], []]);
  });
});

describe('grpcStatusOf', () => {
  it('should map refusals to INVALID_ARGUMENT naming the proto field', () => {
    expect(grpcStatusOf(new InvalidRecallRequestError('projectId', 'is required'))).toEqual({
      code: status.INVALID_ARGUMENT,
      message: 'scope.project_id: is required',
    });
  });

  it('should map access, outage and anything else', () => {
    expect(grpcStatusOf(new TenantAccessError('unauthenticated', 'no token')).code).toBe(
      status.UNAUTHENTICATED,
    );
    expect(grpcStatusOf(new TenantAccessError('permission_denied', 'no')).code).toBe(
      status.PERMISSION_DENIED,
    );
    expect(grpcStatusOf(new DownstreamUnavailableError('es down')).code).toBe(status.UNAVAILABLE);
    expect(grpcStatusOf(new Error('boom'))).toEqual({
      code: status.INTERNAL,
      message: 'internal error: boom',
    });
  });
});
