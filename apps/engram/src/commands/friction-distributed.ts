import { loadConfig, type EngramConfig } from '@engram/config';
import {
  createElasticsearchClient,
  ElasticsearchFrictionReads,
  retrievalIndexNames,
  toolCallIndexName,
} from '@engram/elasticsearch';
import { DistributedFrictionSource } from './friction-distributed-source';

/**
 * `engram friction-report --distributed`: the source on the configured servers, as the other
 * `--distributed` commands find them — Elasticsearch at ENGRAM_ES_URL with the indices of
 * ENGRAM_TOPIC_PREFIX (the tool calls included: every signal it reads is there).
 */
export function openDistributedFrictionSource(
  config: Pick<EngramConfig, 'elasticsearch' | 'topicPrefix'> = loadConfig(),
): DistributedFrictionSource {
  const client = createElasticsearchClient(config.elasticsearch.url);
  return new DistributedFrictionSource({
    elasticsearch: new ElasticsearchFrictionReads(client, {
      ...retrievalIndexNames(config.topicPrefix),
      toolCalls: toolCallIndexName(config.topicPrefix),
    }),
    endpoints: { elasticsearch: config.elasticsearch.url },
    close: () => client.close(),
  });
}
