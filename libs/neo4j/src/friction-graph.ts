import type { FailurePatternRow, FrictionScope, FrictionWindow } from '@engram/core';
import neo4j, { type Driver } from 'neo4j-driver';
import { graphNumber } from './co-access-neighbours';
import { classifyNeo4jError } from './neo4j-client';

// The friction report's reads from the observer's graph (distributed mode, SPEC §9): Cypher
// aggregations over what the observer writes (observer-graph.cypher.ts) — the sessions with their
// tool-call counts, and per session the error patterns it hit:
//   (:Session {id, tenantId, projectId, agentId, startedAt, lastActivityAt, toolCalls})
//   (:Session)-[:HIT {occurrences, lastSeenAt, sampleMessage}]->(:ErrorPattern {toolName, normalisedError})
// The graph aggregates; the process receives one row per session total and per error pattern.

/** The sessions active in the window and scope, and their tool calls (observer counters). */
export const FRICTION_SESSIONS = `
MATCH (s:Session)
WHERE s.lastActivityAt >= $from AND coalesce(s.startedAt, s.lastActivityAt) < $to
  AND ($tenantId IS NULL OR s.tenantId = $tenantId)
  AND ($projectId IS NULL OR s.projectId = $projectId)
RETURN collect(s.id) AS sessionIds, sum(coalesce(s.toolCalls, 0)) AS toolCalls`;

/**
 * Error patterns per project over the sessions whose last hit of the pattern is in the window,
 * kept when the tenant-wide pattern (tool + normalised message) reaches `$minSessions` sessions
 * — the embedded source's GROUP BY and window function, as two aggregations.
 */
export const FRICTION_FAILURE_PATTERNS = `
MATCH (s:Session)-[h:HIT]->(e:ErrorPattern)
WHERE h.lastSeenAt >= $from AND h.lastSeenAt < $to
  AND ($tenantId IS NULL OR e.tenantId = $tenantId)
  AND ($projectId IS NULL OR e.projectId = $projectId)
  AND trim(coalesce(e.normalisedError, '')) <> ''
WITH e.tenantId AS tenantId, e.projectId AS projectId, e.toolName AS toolName,
     e.normalisedError AS normalisedError, s, h
ORDER BY s.id
WITH tenantId, projectId, toolName, normalisedError,
     count(DISTINCT s) AS sessions, sum(h.occurrences) AS occurrences,
     min(h.sampleMessage) AS sampleMessage, min(h.lastSeenAt) AS firstAt,
     max(h.lastSeenAt) AS lastAt, collect(s.id)[0..$maxEvidence] AS sessionIds,
     collect(DISTINCT s.agentId) AS agentIds
WITH tenantId, toolName, normalisedError, sum(sessions) AS clusterSessions,
     collect({projectId: projectId, sessions: sessions, occurrences: occurrences,
              sampleMessage: sampleMessage, firstAt: firstAt, lastAt: lastAt,
              sessionIds: sessionIds, agentIds: agentIds}) AS rows
WHERE clusterSessions >= $minSessions
UNWIND rows AS row
RETURN tenantId, row.projectId AS projectId, toolName, normalisedError, row.sessions AS sessions,
       row.occurrences AS occurrences, row.sampleMessage AS sampleMessage,
       row.firstAt AS firstAt, row.lastAt AS lastAt, row.sessionIds AS sessionIds,
       row.agentIds AS agentIds
ORDER BY tenantId, toolName, normalisedError, projectId`;

function scopeParameters(scope: FrictionScope): {
  tenantId: string | null;
  projectId: string | null;
} {
  return {
    tenantId: scope.kind === 'all' ? null : scope.tenantId,
    projectId: scope.kind === 'project' ? scope.projectId : null,
  };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

export class Neo4jFrictionReads {
  constructor(
    private readonly driver: Driver,
    private readonly options: { database?: string } = {},
  ) {}

  /** Sessions the observer saw active in the window and scope, and their tool calls. */
  async sessions(
    window: FrictionWindow,
    scope: FrictionScope,
  ): Promise<{ sessionIds: string[]; toolCalls: number }> {
    const [record] = await this.read(FRICTION_SESSIONS, {
      from: window.from,
      to: window.to,
      ...scopeParameters(scope),
    });
    return {
      sessionIds: strings(record?.get('sessionIds')),
      toolCalls: graphNumber(record?.get('toolCalls')),
    };
  }

  /**
   * Error patterns per project (FailurePatternRow) from the sessions' HITs. What the graph does
   * not keep is absent: tool time and tokens (0), event ids and the failing command (none);
   * `firstAt` is the earliest of the sessions' last hits.
   */
  async failurePatterns(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: { minSessionsPerFinding: number; maxEvidence: number },
  ): Promise<FailurePatternRow[]> {
    const records = await this.read(FRICTION_FAILURE_PATTERNS, {
      from: window.from,
      to: window.to,
      ...scopeParameters(scope),
      minSessions: neo4j.int(settings.minSessionsPerFinding),
      maxEvidence: neo4j.int(settings.maxEvidence),
    });
    return records.map((record) => ({
      tenantId: record.get('tenantId') as string,
      projectId: record.get('projectId') as string,
      toolName: record.get('toolName') as string,
      normalisedError: record.get('normalisedError') as string,
      sampleMessage: (record.get('sampleMessage') as string | null) ?? '',
      sampleCommand: null,
      sessions: graphNumber(record.get('sessions')),
      occurrences: graphNumber(record.get('occurrences')),
      durationMs: 0,
      tokens: 0,
      firstAt: graphNumber(record.get('firstAt')),
      lastAt: graphNumber(record.get('lastAt')),
      sessionIds: strings(record.get('sessionIds')).sort(),
      eventIds: [],
      agentIds: strings(record.get('agentIds')).sort(),
    }));
  }

  private async read(query: string, parameters: Record<string, unknown>) {
    try {
      const { records } = await this.driver.executeQuery(query, parameters, {
        routing: neo4j.routing.READ,
        ...(this.options.database ? { database: this.options.database } : {}),
      });
      return records;
    } catch (error) {
      throw classifyNeo4jError(error);
    }
  }
}
