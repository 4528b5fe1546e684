import { isInt, type Driver } from 'neo4j-driver';

/** A tenant's project, as the graph's nodes carry it. */
export interface GraphScope {
  tenantId: string;
  projectId: string;
}

/**
 * A record value as plain JSON: Neo4j integers as numbers, and map keys sorted — Neo4j returns a
 * map's properties in no fixed order, so two equal graphs could otherwise print differently.
 */
export const plain = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value, (_key, v: unknown) => {
      if (isInt(v)) return v.toNumber();
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
      return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)));
    }),
  ) as unknown;

/**
 * The project's whole graph as sorted lines: nodes with their properties, relationships with
 * their ends and properties. The run's session-id prefix and project id are replaced by
 * placeholders, so runs on different topics and projects compare.
 */
export async function graphLines(
  driver: Driver,
  scope: GraphScope,
  run: string,
): Promise<string[]> {
  const keyOf = `CASE WHEN n.path IS NOT NULL THEN n.path WHEN n.hash IS NOT NULL THEN n.hash
                      WHEN n.id IS NOT NULL THEN n.id ELSE n.projectId END`;
  const nodes = await driver.executeQuery(
    `MATCH (n) WHERE n.tenantId = $tenantId AND n.projectId = $projectId
     RETURN labels(n) AS labels, properties(n) AS props`,
    scope,
  );
  const relationships = await driver.executeQuery(
    `MATCH (n)-[r]->(m) WHERE n.tenantId = $tenantId AND n.projectId = $projectId
     WITH n, r, m, ${keyOf} AS from
     WITH r, m, from, ${keyOf.replaceAll('n.', 'm.')} AS to
     RETURN type(r) AS type, from, to, properties(r) AS props`,
    scope,
  );
  const lines = [
    ...nodes.records.map((r) => JSON.stringify(plain([r.get('labels'), r.get('props')]))),
    ...relationships.records.map((r) =>
      JSON.stringify(plain([r.get('type'), r.get('from'), r.get('to'), r.get('props')])),
    ),
  ];
  return lines
    .map((line) => line.replaceAll(run, 'RUN').replaceAll(scope.projectId, 'PROJECT'))
    .sort();
}
