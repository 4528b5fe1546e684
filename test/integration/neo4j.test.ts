import { createNeo4jDriver, ensureGraphSchema, neo4jHealth } from '@engram/neo4j';
import type { Integer } from 'neo4j-driver';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from './support/unique';

describe('Neo4j', () => {
  const driver = createNeo4jDriver({ url: inject('infra').neo4jUrl });

  afterAll(async () => {
    await driver.close();
  });

  it('should answer over Bolt', async () => {
    expect(await neo4jHealth(driver)).toEqual({ ok: true });
  });

  it('should apply the schema twice without error', async () => {
    await ensureGraphSchema(driver);
    await ensureGraphSchema(driver);
    const { records } = await driver.executeQuery(
      'SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names',
    );
    expect(records[0].get('names')).toEqual(
      expect.arrayContaining(['file_key', 'memory_key', 'episode_key']),
    );
  });

  it('should leave one node pair and one relationship after the same MERGE twice', async () => {
    const projectId = uniqueName('project');
    const merge = `
      UNWIND $rows AS row
      MERGE (a:File {tenantId: $tenantId, projectId: $projectId, path: row.from})
      MERGE (b:File {tenantId: $tenantId, projectId: $projectId, path: row.to})
      MERGE (a)-[r:CO_ACCESSED]->(b)
      SET r.rawCount = row.count`;
    const params = {
      tenantId: 't1',
      projectId,
      rows: [{ from: 'src/a.ts', to: 'src/b.ts', count: 2 }],
    };
    await driver.executeQuery(merge, params);
    await driver.executeQuery(merge, params);

    const { records } = await driver.executeQuery(
      `MATCH (f:File {projectId: $projectId}) WITH count(f) AS files
       MATCH (:File {projectId: $projectId})-[r:CO_ACCESSED]->() RETURN files, count(r) AS edges`,
      { projectId },
    );
    const count = (key: string) => (records[0].get(key) as Integer).toNumber();
    expect(count('files')).toBe(2);
    expect(count('edges')).toBe(1);
  });
});
