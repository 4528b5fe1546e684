// Engram graph schema (SPEC §5): uniqueness constraints on the natural keys every MERGE of the
// observer relies on; each also creates the index that serves lookups by that key.
// Idempotent (IF NOT EXISTS): run it as often as you like, e.g.
//   cypher-shell -a bolt://127.0.0.1:7687 -f deploy/neo4j/constraints.cypher
// Kept identical to ENGRAM_GRAPH_SCHEMA in libs/neo4j/src/schema-setup.ts (the services apply
// that at start); test/unit/neo4j-deploy.spec.ts fails when the two differ.

CREATE CONSTRAINT project_key IF NOT EXISTS FOR (p:Project) REQUIRE (p.tenantId, p.projectId) IS UNIQUE;
CREATE CONSTRAINT file_key IF NOT EXISTS FOR (f:File) REQUIRE (f.tenantId, f.projectId, f.path) IS UNIQUE;
CREATE CONSTRAINT session_key IF NOT EXISTS FOR (s:Session) REQUIRE s.id IS UNIQUE;
CREATE CONSTRAINT episode_key IF NOT EXISTS FOR (e:Episode) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT error_pattern_key IF NOT EXISTS FOR (e:ErrorPattern) REQUIRE (e.tenantId, e.projectId, e.hash) IS UNIQUE;
CREATE CONSTRAINT memory_key IF NOT EXISTS FOR (m:Memory) REQUIRE m.id IS UNIQUE;
