import { loadConfig, type EngramConfig } from '@engram/config';
import {
  createElasticsearchClient,
  ElasticsearchFrictionReads,
  retrievalIndexNames,
  toolCallIndexName,
} from '@engram/elasticsearch';
import { createNeo4jDriver, Neo4jFrictionReads } from '@engram/neo4j';
import { DistributedFrictionSource } from './friction-distributed-source';

/**
 * `engram friction-report --distributed`: the source on the configured servers, as the other
 * `--distributed` commands find them — Elasticsearch at ENGRAM_ES_URL with the indices of
 * ENGRAM_TOPIC_PREFIX, Neo4j at ENGRAM_NEO4J_URL.
 */
export function openDistributedFrictionSource(
  config: Pick<EngramConfig, 'elasticsearch' | 'neo4j' | 'topicPrefix'> = loadConfig(),
): DistributedFrictionSource {
  const client = createElasticsearchClient(config.elasticsearch.url);
  const driver = createNeo4jDriver(config.neo4j);
  return new DistributedFrictionSource({
    elasticsearch: new ElasticsearchFrictionReads(client, {
      ...retrievalIndexNames(config.topicPrefix),
      toolCalls: toolCallIndexName(config.topicPrefix),
    }),
    neo4j: new Neo4jFrictionReads(driver),
    endpoints: { elasticsearch: config.elasticsearch.url, neo4j: config.neo4j.url },
    close: async () => {
      await Promise.allSettled([client.close(), driver.close()]);
    },
  });
}
