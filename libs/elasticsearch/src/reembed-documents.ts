import type { Client } from '@elastic/elasticsearch';
import type { QueryDslQueryContainer } from '@elastic/elasticsearch/lib/api/types';
import { MisconfigurationError, modelVector } from '@engram/core';
import { classifyElasticsearchError } from './elasticsearch-client';
import { embeddingFields } from '@engram/core';
import type { RetrievalIndexNames, RetrievalTier } from './retrieval-indices';

// `engram reindex --distributed`: the documents of a retrieval index whose vector is not of the
// configured model get one, by a partial update of the vector fields guarded by the sequence
// number they were read at — a document the indexer replaced meanwhile keeps that write (409).
// Documents already of the model are not selected, so a run is idempotent and resumable.

export interface ReembedModel {
  model: string;
  dims: number;
}

/** A document to embed, with the version it was read at. */
export interface IndexedDocumentToEmbed {
  id: string;
  text: string;
  seqNo: number;
  primaryTerm: number;
}

/** With text, and without a vector of this model (another model, another dimension, none). */
function notOfModel(target: ReembedModel): QueryDslQueryContainer {
  return {
    bool: {
      filter: [{ exists: { field: 'text' } }],
      should: [
        { bool: { must_not: [{ term: { embeddingModel: target.model } }] } },
        { bool: { must_not: [{ term: { embeddingDims: target.dims } }] } },
      ],
      minimum_should_match: 1,
    },
  };
}

export class ElasticsearchReembedder {
  constructor(
    private readonly client: Client,
    private readonly indices: RetrievalIndexNames,
  ) {}

  /**
   * Documents still to embed. Refuses a model whose dimension the index's `dense_vector` was not
   * created with: Elasticsearch would reject every vector.
   */
  async remaining(tier: RetrievalTier, target: ReembedModel): Promise<number> {
    const index = this.indices[tier];
    try {
      const mapping = await this.client.indices.getMapping({ index });
      for (const [name, { mappings }] of Object.entries(mapping)) {
        const meta = mappings._meta as { engram?: { embeddingDims?: number } } | undefined;
        const dims = meta?.engram?.embeddingDims;
        if (dims !== undefined && dims !== target.dims) {
          throw new MisconfigurationError(
            `${name} holds ${dims}-dimensional vectors and ${target.model} makes ${target.dims}: ` +
              'recreate the retrieval indices with the new dimension, then reindex',
            { index: name, dims, model: target.model },
          );
        }
      }
      const { count } = await this.client.count({ index, query: notOfModel(target) });
      return count;
    } catch (error) {
      throw classifyElasticsearchError(error);
    }
  }

  /** Pages in one point-in-time, by shard order: a skipped document is not read twice. */
  async *pages(
    tier: RetrievalTier,
    target: ReembedModel,
    size: number,
  ): AsyncGenerator<IndexedDocumentToEmbed[]> {
    const index = this.indices[tier];
    const pit = await this.client.openPointInTime({ index, keep_alive: '2m' });
    let pitId = pit.id;
    let after: (string | number)[] | undefined;
    try {
      for (;;) {
        const found = await this.client.search<{ text?: string }>({
          size,
          query: notOfModel(target),
          pit: { id: pitId, keep_alive: '2m' },
          sort: [{ _shard_doc: 'asc' }],
          ...(after && { search_after: after }),
          _source: ['text'],
          seq_no_primary_term: true,
        });
        pitId = found.pit_id ?? pitId;
        const hits = found.hits.hits;
        if (hits.length === 0) return;
        after = hits[hits.length - 1].sort as (string | number)[];
        yield hits
          .filter((hit) => typeof hit._source?.text === 'string' && hit._source.text !== '')
          .map((hit) => ({
            id: hit._id as string,
            text: hit._source?.text as string,
            seqNo: hit._seq_no ?? 0,
            primaryTerm: hit._primary_term ?? 0,
          }));
      }
    } finally {
      await this.client.closePointInTime({ id: pitId }).catch(() => undefined);
    }
  }

  /** Guarded partial updates of the vector fields; returns how many were written. */
  async write(
    tier: RetrievalTier,
    target: ReembedModel,
    page: IndexedDocumentToEmbed[],
    vectors: Float32Array[],
  ): Promise<number> {
    if (page.length === 0) return 0;
    const index = this.indices[tier];
    const operations = page.flatMap((doc, i) => [
      {
        update: {
          _index: index,
          _id: doc.id,
          if_seq_no: doc.seqNo,
          if_primary_term: doc.primaryTerm,
        },
      },
      {
        // All the vector fields: the stored `_source` holds only the packed form, and a partial
        // update without the numbers would re-index the document without its vector.
        doc: embeddingFields(modelVector(target.model, vectors[i])),
      },
    ]);
    let response;
    try {
      response = await this.client.bulk({ operations });
    } catch (error) {
      throw classifyElasticsearchError(error);
    }
    let written = 0;
    for (const item of response.items) {
      const result = item.update;
      if (result?.status === 200) written += 1;
      // 409: replaced since it was read (that write stands); 404: deleted meanwhile.
      else if (result && result.status !== 409 && result.status !== 404) {
        throw classifyElasticsearchError(
          new Error(`reindex of ${result._id} in ${index}: ${JSON.stringify(result.error)}`),
        );
      }
    }
    return written;
  }
}
