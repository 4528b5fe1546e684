import type { Embedder } from '@engram/ai';
import type { BackoffOptions, IdleMergePolicy } from '@engram/core';
import { inject } from 'vitest';
import { openElasticsearchIndexing } from '../../../apps/retrieval/src/elasticsearch-retrieval';
import type { RetrievalTopics } from '../../../apps/retrieval/src/retrieval-topics';
import {
  startRetrieval,
  type RunningRetrieval,
} from '../../../apps/retrieval/src/retrieval.topology';
import { testPlatform } from './kafka-fixtures';

export interface TestIndexerOptions {
  /** Default: the test Elasticsearch (a proxy's address to cut it). */
  elasticsearchUrl?: string;
  embedder: Embedder;
  topics: RetrievalTopics;
  indexPrefix: string;
  groupId: string;
  partitions?: number;
  retry?: BackoffOptions;
  idleMerge?: IdleMergePolicy | false;
}

/**
 * The retrieval indexer as `engram start --distributed` runs it (RetrievalModule): the topology
 * on a Kafka platform of its own, writing into the Elasticsearch indices of `indexPrefix`;
 * `stop` drains and commits, then closes the indices' client and the platform.
 */
export async function startTestIndexer(options: TestIndexerOptions): Promise<RunningRetrieval> {
  const indexing = await openElasticsearchIndexing({
    elasticsearchUrl: options.elasticsearchUrl ?? inject('infra').elasticsearchUrl,
    indexPrefix: options.indexPrefix,
    dims: options.embedder.dims,
    ...(options.idleMerge !== undefined && { idleMerge: options.idleMerge }),
  });
  const platform = await testPlatform().catch(async (error: unknown) => {
    await indexing.close();
    throw error;
  });
  try {
    const running = await startRetrieval({
      platform,
      backend: indexing.backend,
      embedder: options.embedder,
      topics: options.topics,
      groupId: options.groupId,
      ...(options.partitions !== undefined && { partitions: options.partitions }),
      ...(options.retry && { retry: options.retry }),
    });
    return {
      ...running,
      async stop() {
        await running.stop();
        await indexing.close();
        await platform.close();
      },
    };
  } catch (error) {
    await indexing.close();
    await platform.close();
    throw error;
  }
}
