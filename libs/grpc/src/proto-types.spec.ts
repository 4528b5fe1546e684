// The generated message types (npm run proto:types) describe exactly what @grpc/proto-loader gives
// with PROTO_LOADER_OPTIONS: a message decoded through the servers' own definitions equals a value
// of its `__Output` type that names every field. If the generator's options and the loader's
// drift apart (snake_case keys, int64 as Long or string, enums as numbers, no defaults), these
// fail. The @ts-expect-error lines are checked by `npm run typecheck`: each is a drift the
// compiler now reports in the mapping code (an unused one fails the typecheck).
import { describe, expect, it } from 'vitest';
import type { recallv1, reviewv1 } from './proto-types';
import {
  recallRequestAsGiven,
  recallResponseAsReceived,
  reviewResponseAsReceived,
} from './testing/received-message';

describe('generated gRPC types', () => {
  it('should describe a request exactly as a handler is given it', () => {
    const expected: recallv1.RecallRequest__Output = {
      scope: { tenantId: '', projectId: 'api' },
      query: 'q',
      phase: 'UNIVERSAL_PHASE_UNSPECIFIED',
      k: 0,
      tier: 'TIER_MEMORIES',
      memoryTypes: [],
      relatedFiles: ['a.ts'],
      sessionId: '',
      timeWindow: { fromMs: 1_700_000_000_000, toMs: 1_800_000_000_000 },
      temporal: 'timeWindow',
      excludeStale: false,
      allowHyde: false,
      noTrack: true,
    };
    const given = recallRequestAsGiven('Recall', {
      scope: { projectId: 'api' },
      query: 'q',
      tier: 3,
      relatedFiles: ['a.ts'],
      timeWindow: { fromMs: 1_700_000_000_000, toMs: 1_800_000_000_000 },
      noTrack: true,
    });
    expect(given).toEqual(expected);
  });

  it('should describe an answer exactly as a client receives it', () => {
    const neighbors: recallv1.GetFileNeighborsResponse__Output = {
      filePath: 'src/a.ts',
      neighbors: [
        {
          path: 'src/b.ts',
          weight: 0.5,
          rawCount: 3,
          directional: true,
          direction: 'outgoing',
          avgTimeDeltaMs: 1500,
          lastObservedAtMs: 1_700_000_000_000,
          score: 0.4,
          source: 'co_access',
        },
      ],
    };
    expect(recallResponseAsReceived('GetFileNeighbors', neighbors)).toEqual(neighbors);

    const decision: reviewv1.DecisionResponse__Output = {
      proposal: {
        proposalId: 'p-20260217-001',
        tenantId: 'acme',
        projectId: 'api',
        section: 'Hard Rules',
        title: 't',
        text: 'Never commit .env files',
        status: 'approved',
        evidenceMemoryIds: ['m1'],
        evidenceEventIds: [],
        evidenceSessionIds: [],
        evidenceEpisodeIds: [],
        createdAt: 1_700_000_000_000,
        expiresAt: 1_700_604_800_000,
        decidedAt: 1_700_000_100_000,
        decidedBy: 'tim',
        promotedMemoryId: '',
        kind: 'reflection',
        target: '',
        severity: 0,
      },
      changed: true,
    };
    expect(reviewResponseAsReceived('Approve', decision)).toEqual(decision);
  });

  it('should make a mapping that does not follow the proto a type error', () => {
    const request = recallRequestAsGiven('InjectForFile', { filePath: 'a.ts' });
    // @ts-expect-error -- fields are camelCase (PROTO_LOADER_OPTIONS), never the proto's snake_case
    expect(request.file_path).toBeUndefined();
    // @ts-expect-error -- an enum value the proto does not have
    const tier: recallv1.Tier__Output = 'TIER_EVERYTHING';
    expect(tier).toBe('TIER_EVERYTHING');
    // @ts-expect-error -- int64 fields arrive as numbers (longs: Number), not strings or Longs
    const validatedAt: recallv1.WorkflowRecipe__Output['lastValidatedAtMs'] = '1700000000000';
    expect(validatedAt).toBeDefined();
    // @ts-expect-error -- an answer is built complete: leaving out a field (`source`) fails
    const neighbor: recallv1.FileNeighbor__Output = {
      path: 'b.ts',
      weight: 1,
      rawCount: 1,
      directional: false,
      direction: 'both',
      avgTimeDeltaMs: 0,
      lastObservedAtMs: 0,
      score: 1,
    };
    expect(neighbor.path).toBe('b.ts');
  });
});
