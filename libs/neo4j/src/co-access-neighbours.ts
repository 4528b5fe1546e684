import neo4j, { type Driver, isInt, type Record as Neo4jRecord } from 'neo4j-driver';
import type {
  GraphCoAccessEdgeEvidence,
  GraphFileEvidence,
  GraphNeighbourEvidence,
  GraphNeighbourEvidenceQuery,
} from '@engram/core';
import {
  CO_ACCESS_EDGES_OF_FILE,
  NEIGHBOUR_EVIDENCE,
  TENANTS_OF_PROJECT,
  TOP_CO_ACCESS_NEIGHBOURS,
} from './observer-graph.cypher';
import type { GraphCoAccessNeighbour, GraphScope } from './observer-graph.types';

/** A number from a record field: Neo4j integers arrive as Integer objects. */
export function graphNumber(value: unknown): number {
  if (value === null || value === undefined) return 0;
  return isInt(value) ? value.toNumber() : Number(value);
}

/**
 * The file's top co-access neighbours (SPEC §12 `engram neighbors`), read from the CO_ACCESSED
 * edges the observer maintains: highest weight first, then raw count, then path.
 */
export async function topCoAccessNeighbours(
  driver: Driver,
  query: GraphScope & { path: string; k: number },
): Promise<GraphCoAccessNeighbour[]> {
  const { records } = await driver.executeQuery(
    TOP_CO_ACCESS_NEIGHBOURS,
    {
      tenantId: query.tenantId,
      projectId: query.projectId,
      path: query.path,
      k: neo4j.int(Math.max(0, Math.floor(query.k))),
    },
    { routing: neo4j.routing.READ },
  );
  return records.map(neighbourOf);
}

function neighbourOf(record: Neo4jRecord): GraphCoAccessNeighbour {
  const direction = record.get('direction') as string | null;
  const queriedIsA = record.get('queriedIsA') as boolean;
  const outgoing = queriedIsA ? 'a_to_b' : 'b_to_a';
  return {
    file: record.get('file') as string,
    weight: graphNumber(record.get('weight')),
    rawCount: graphNumber(record.get('rawCount')),
    sessionCount: graphNumber(record.get('sessionCount')),
    avgTimeDeltaMs: graphNumber(record.get('avgTimeDeltaMs')),
    direction:
      direction === null || direction === 'none'
        ? 'both'
        : direction === outgoing
          ? 'outgoing'
          : 'incoming',
    lastObservedAt: graphNumber(record.get('lastObservedAt')),
  };
}

/**
 * `engram neighbors`' evidence (libs/core rankFileNeighbours ranks it, as embedded does): the
 * counts of NEIGHBOUR_EVIDENCE and the file's CO_ACCESSED edges, read in one transaction.
 */
export async function neighbourEvidence(
  driver: Driver,
  query: GraphNeighbourEvidenceQuery,
): Promise<GraphNeighbourEvidence> {
  const session = driver.session({ defaultAccessMode: neo4j.session.READ });
  try {
    return await session.executeRead(async (tx) => {
      const params = {
        tenantId: query.tenantId,
        projectId: query.projectId,
        path: query.path,
        popular: neo4j.int(Math.max(0, Math.floor(query.popular))),
        sessionWindow: neo4j.int(Math.max(1, Math.floor(query.sessionWindow))),
      };
      const counts = (await tx.run(NEIGHBOUR_EVIDENCE, params)).records[0];
      const edges = (await tx.run(CO_ACCESS_EDGES_OF_FILE, params)).records.map(
        (record): GraphCoAccessEdgeEvidence => ({
          ...neighbourOf(record),
          observed: graphNumber(record.get('timedCount')) > 0,
        }),
      );
      const files = (name: string) =>
        ((counts?.get(name) ?? []) as Record<string, unknown>[]).map((row): GraphFileEvidence => ({
          file: row.file as string,
          withQuery: graphNumber(row.withQuery),
          sessions: graphNumber(row.sessions),
        }));
      const together = files('together');
      return {
        projectSessions: graphNumber(counts?.get('projectSessions')),
        querySessions: together.find((file) => file.file === query.path)?.withQuery ?? 0,
        files: [...together.filter((file) => file.file !== query.path), ...files('popular')],
        edges,
      };
    });
  } finally {
    await session.close();
  }
}

/** Tenants that have a project of this id (one, normally). */
export async function tenantsOfProject(driver: Driver, projectId: string): Promise<string[]> {
  const { records } = await driver.executeQuery(
    TENANTS_OF_PROJECT,
    { projectId },
    { routing: neo4j.routing.READ },
  );
  return records.map((record) => record.get('tenantId') as string);
}
