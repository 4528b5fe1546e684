import type { Driver } from 'neo4j-driver';

/** Uniqueness constraints on the natural keys of SPEC §5; every MERGE relies on them. */
export const ENGRAM_GRAPH_SCHEMA: readonly string[] = [
  'CREATE CONSTRAINT project_key IF NOT EXISTS FOR (p:Project) REQUIRE (p.tenantId, p.projectId) IS UNIQUE',
  'CREATE CONSTRAINT file_key IF NOT EXISTS FOR (f:File) REQUIRE (f.tenantId, f.projectId, f.path) IS UNIQUE',
  'CREATE CONSTRAINT session_key IF NOT EXISTS FOR (s:Session) REQUIRE s.id IS UNIQUE',
  'CREATE CONSTRAINT episode_key IF NOT EXISTS FOR (e:Episode) REQUIRE e.id IS UNIQUE',
  'CREATE CONSTRAINT error_pattern_key IF NOT EXISTS FOR (e:ErrorPattern) REQUIRE (e.tenantId, e.projectId, e.hash) IS UNIQUE',
  'CREATE CONSTRAINT memory_key IF NOT EXISTS FOR (m:Memory) REQUIRE m.id IS UNIQUE',
];

const EQUIVALENT_SCHEMA_CODES = new Set([
  'Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists',
  'Neo.ClientError.Schema.ConstraintAlreadyExists',
  'Neo.ClientError.Schema.IndexAlreadyExists',
]);

/**
 * Applies schema statements one by one (schema changes cannot share a transaction with writes).
 * `IF NOT EXISTS` makes a rerun a no-op; two instances starting together can still race between
 * the check and the creation, and the loser's "already exists" error is success.
 */
export async function ensureGraphSchema(
  driver: Driver,
  statements: readonly string[] = ENGRAM_GRAPH_SCHEMA,
): Promise<void> {
  for (const statement of statements) {
    try {
      await driver.executeQuery(statement);
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (!EQUIVALENT_SCHEMA_CODES.has(code)) throw error;
    }
  }
}
