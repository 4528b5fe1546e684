import { createGraphWriterDriver } from '@engram/neo4j';
import type { Driver } from 'neo4j-driver';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { clearBenchProject } from '../../apps/engram/src/commands/bench-observe';
import { uniqueName } from './support/unique';

describe('engram bench observe: the clean-up of an earlier run on real Neo4j', () => {
  let driver: Driver;

  beforeAll(() => {
    driver = createGraphWriterDriver({ url: inject('infra').neo4jUrl });
  });

  afterAll(async () => {
    await driver?.close();
  });

  const countOf = async (projectId: string) => {
    const { records } = await driver.executeQuery(
      'MATCH (n {projectId: $projectId}) RETURN count(n) AS nodes',
      { projectId },
    );
    return Number(records[0].get('nodes'));
  };

  it('should delete every node and edge of the project over several transactions, nothing else', async () => {
    const project = uniqueName('it-bench-observe');
    const other = uniqueName('it-bench-observe-other');
    // 450 files, each related to its neighbour: more than two chunks of the clean-up.
    await driver.executeQuery(
      `UNWIND range(0, 449) AS i
       CREATE (:File {tenantId: 't', projectId: $project, path: 'src/f' + i + '.ts'})`,
      { project },
    );
    await driver.executeQuery(
      `MATCH (a:File {projectId: $project}), (b:File {projectId: $project})
       WHERE b.path = 'src/f' + (toInteger(substring(a.path, 5, size(a.path) - 8)) + 1) + '.ts'
       CREATE (a)-[:CO_ACCESSED {sessionCount: 1}]->(b)`,
      { project },
    );
    await driver.executeQuery(
      `CREATE (:File {tenantId: 't', projectId: $other, path: 'src/kept.ts'})`,
      { other },
    );
    expect(await countOf(project)).toBe(450);
    const { records } = await driver.executeQuery(
      'MATCH (:File {projectId: $project})-[e:CO_ACCESSED]->() RETURN count(e) AS edges',
      { project },
    );
    expect(Number(records[0].get('edges'))).toBe(449);

    await clearBenchProject(driver, project);

    expect(await countOf(project)).toBe(0);
    expect(await countOf(other)).toBe(1);
    await clearBenchProject(driver, other);
  });
});
