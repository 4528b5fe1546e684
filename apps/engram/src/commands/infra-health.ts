import type { EngramConfig } from '@engram/config';
import { createElasticsearchClient, elasticsearchHealth } from '@engram/elasticsearch';
import { createKafka } from '@engram/kafka';
import { createNeo4jDriver, neo4jHealth } from '@engram/neo4j';
import { errorMessage } from '@engram/core';

export interface ServerHealth {
  server: string;
  address: string;
  ok: boolean;
  detail: string;
}

async function kafkaHealth(config: EngramConfig): Promise<ServerHealth> {
  const admin = createKafka({ ...config.kafka, clientId: 'engram-health' }).admin();
  const address = config.kafka.brokers.join(',');
  try {
    await admin.connect();
    const topics = await admin.listTopics();
    return { server: 'kafka', address, ok: true, detail: `${topics.length} topics` };
  } catch (error) {
    return { server: 'kafka', address, ok: false, detail: errorMessage(error) };
  } finally {
    await admin.disconnect();
  }
}

async function registryHealth(config: EngramConfig): Promise<ServerHealth> {
  const address = config.schemaRegistry.url;
  try {
    const response = await fetch(`${address}/subjects`, { signal: AbortSignal.timeout(5_000) });
    const subjects = (await response.json()) as unknown[];
    return {
      server: 'schema-registry',
      address,
      ok: response.ok,
      detail: `${subjects.length} subjects`,
    };
  } catch (error) {
    return { server: 'schema-registry', address, ok: false, detail: errorMessage(error) };
  }
}

async function searchHealth(config: EngramConfig): Promise<ServerHealth> {
  const client = createElasticsearchClient(config.elasticsearch.url);
  const health = await elasticsearchHealth(client);
  await client.close();
  return {
    server: 'elasticsearch',
    address: config.elasticsearch.url,
    ok: health.ok,
    detail: health.detail ?? health.status,
  };
}

async function graphHealth(config: EngramConfig): Promise<ServerHealth> {
  const driver = createNeo4jDriver(config.neo4j);
  const health = await neo4jHealth(driver);
  await driver.close();
  return {
    server: 'neo4j',
    address: config.neo4j.url,
    ok: health.ok,
    detail: health.detail ?? 'bolt session ok',
  };
}

/** One real round trip to each server of the distributed deployment. */
export function checkServers(config: EngramConfig): Promise<ServerHealth[]> {
  return Promise.all([
    kafkaHealth(config),
    registryHealth(config),
    searchHealth(config),
    graphHealth(config),
  ]);
}
