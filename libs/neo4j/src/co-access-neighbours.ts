import neo4j, { type Driver, isInt } from 'neo4j-driver';
import { TENANTS_OF_PROJECT, TOP_CO_ACCESS_NEIGHBOURS } from './observer-graph.cypher';
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
  return records.map((record) => {
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
  });
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
