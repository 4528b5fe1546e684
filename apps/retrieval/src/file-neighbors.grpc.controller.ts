import type { Metadata } from '@grpc/grpc-js';
import {
  InvalidRecallRequestError,
  normaliseProjectPath,
  predictFileNeighbours,
  ProjectPathError,
  type CoAccessReader,
  type RankedFileNeighbour,
  type TenantTokens,
} from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { ImpactService, type ImpactAnswer } from './impact.service';
import { requestTenant, type recallv1 } from '@engram/grpc';
import { toRpcException } from './recall-errors';
import { TENANT_TOKENS } from './recall.grpc.controller';
import { scoredMemoryMessage } from './recall-rpcs-proto';

/** DI token of the observer graph's neighbours reader (Neo4j distributed, SQLite embedded). */
export const CO_ACCESS_READER = Symbol('CO_ACCESS_READER');

const DEFAULT_K = 5;
const MAX_K = 100;

/**
 * The request checked and normalised; errors name the field as recall.proto does. AnalyzeImpact
 * asks about a file the same way, without `k`.
 */
export function fileNeighborsQuery(
  request: Pick<recallv1.GetFileNeighborsRequest__Output, 'scope' | 'filePath'> &
    Partial<Pick<recallv1.GetFileNeighborsRequest__Output, 'k'>>,
  tenantId: string,
) {
  if (tenantId === '') throw new InvalidRecallRequestError('scope.tenantId', 'is required');
  const projectId = request.scope?.projectId?.trim() ?? '';
  if (projectId === '') throw new InvalidRecallRequestError('scope.projectId', 'is required');
  let path: string;
  try {
    path = normaliseProjectPath(request.filePath ?? '', null);
  } catch (error) {
    if (!(error instanceof ProjectPathError)) throw error;
    throw new InvalidRecallRequestError(
      'filePath',
      `${error.message} (relative to the project root)`,
    );
  }
  const k = request.k ?? 0;
  if (k > MAX_K) throw new InvalidRecallRequestError('k', `at most ${MAX_K}, got ${k}`);
  return { tenantId, projectId, path, k: k === 0 ? DEFAULT_K : k };
}

function neighbourMessage(n: RankedFileNeighbour): recallv1.FileNeighbor__Output {
  return {
    path: n.file,
    weight: n.weight,
    rawCount: n.rawCount,
    directional: n.direction !== 'both',
    direction: n.direction,
    avgTimeDeltaMs: n.avgTimeDeltaMs,
    lastObservedAtMs: n.lastObservedAt,
    score: n.score,
    source: n.source,
  };
}

export function impactResponse(answer: ImpactAnswer): recallv1.AnalyzeImpactResponse__Output {
  return {
    filePath: answer.filePath,
    directDependents: answer.direct,
    transitiveDependents: answer.transitive,
    memories: answer.memories.map(scoredMemoryMessage),
    e2eObservations: answer.e2eObservations.map(scoredMemoryMessage),
    testFiles: answer.testFiles,
    impactScore: answer.impactScore,
  };
}

/**
 * The rpcs on the observer's graph: GetFileNeighbors, the co-access prediction for a file (SPEC
 * §5, §12 — the same answer as `engram neighbors`), and AnalyzeImpact, that prediction walked
 * hop by hop and joined with the memories about the files reached.
 */
@Controller()
export class FileNeighborsGrpcController {
  constructor(
    @Inject(CO_ACCESS_READER) private readonly reader: CoAccessReader,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
    @Inject(ImpactService) private readonly impact: ImpactService,
  ) {}

  @GrpcMethod('Recall', 'AnalyzeImpact')
  async analyzeImpact(
    request: recallv1.AnalyzeImpactRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.AnalyzeImpactResponse> {
    try {
      const tenant = requestTenant(this.tokens, metadata, request.scope);
      const { tenantId, projectId, path } = fileNeighborsQuery(request, tenant);
      const answer = await this.impact.analyze({ tenantId, projectId }, path, request.maxDepth);
      return impactResponse(answer);
    } catch (error) {
      throw toRpcException(error);
    }
  }

  @GrpcMethod('Recall', 'GetFileNeighbors')
  async getFileNeighbors(
    request: recallv1.GetFileNeighborsRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.GetFileNeighborsResponse> {
    try {
      const tenant = requestTenant(this.tokens, metadata, request.scope);
      const query = fileNeighborsQuery(request, tenant);
      const neighbours = await predictFileNeighbours(this.reader, query);
      return { filePath: query.path, neighbors: neighbours.map(neighbourMessage) };
    } catch (error) {
      throw toRpcException(error);
    }
  }
}
