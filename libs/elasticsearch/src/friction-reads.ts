import type { Client } from '@elastic/elasticsearch';
import type { SortResults } from '@elastic/elasticsearch/lib/api/types';
import type { FrictionScope, FrictionWindow, StaleMemoryRow } from '@engram/core';
import { classifyElasticsearchError } from './elasticsearch-client';
import { compositePages, frictionScopeFilters, inWindow, termsSource } from './friction-composite';
import { ElasticsearchToolCallReads } from './friction-tool-call-reads';
import { countsOf, readAccessCounters, withCountedAccess } from './memory-access';
import type { Filter } from './search-filters';
import type { ElasticsearchIndexNames } from './retrieval-indices';

// The friction report's reads from the retrieval indices (distributed mode, SPEC §9): user turns
// (engram-turns) for the repeated corrections and the totals, stale memories (engram-memories)
// with their access counters (engram-memory-access), tool calls (engram-tool-calls) for the
// totals, retry loops and the failure timeline (friction-tool-call-reads.ts). Counting is done by Elasticsearch (count,
// composite aggregations paged by their `after` key); documents are read only where the core
// must look at each one — a user turn's text, which the core's classification reads — and then
// in bounded pages of a point in time, never by loading an index.

export type FrictionIndexNames = Pick<
  ElasticsearchIndexNames,
  'turns' | 'memories' | 'memoryAccess'
> & {
  /** The tool calls (retrieval-tool-calls.ts: toolCallIndexName). */
  toolCalls: string;
};

/** A user turn as the corrections need it (`text` cut to what the classification reads). */
export interface FrictionTurn {
  tenantId: string;
  projectId: string;
  sessionId: string;
  eventId: string;
  agentId: string;
  at: number;
  text: string;
}

export interface FrictionReadOptions {
  /** Documents or buckets per request. */
  pageSize?: number;
}

/** A user prompt's text is classified from its head (as the embedded source: 4,000 chars). */
const MAX_TURN_CHARS = 4_000;
const KEEP_ALIVE = '2m';

interface TurnSource {
  tenantId: string;
  projectId: string;
  sessionId: string;
  eventId: string;
  agentId: string;
  timestamp: number;
  text?: string;
}

interface StaleMemorySource {
  tenantId: string;
  projectId: string;
  memoryId: string;
  memoryType: string;
  content: string;
  staleAt: number;
  lastAccessedAt?: number;
  accessCount?: number;
  provenanceSessionIds?: string[];
}

export class ElasticsearchFrictionReads {
  private readonly pageSize: number;

  constructor(
    private readonly client: Client,
    private readonly indices: FrictionIndexNames,
    options: FrictionReadOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 1_000;
    this.toolCalls = new ElasticsearchToolCallReads(client, indices.toolCalls, this.pageSize);
  }

  /** The tool calls' reads (retry loops, the failure timeline). */
  readonly toolCalls: ElasticsearchToolCallReads;

  /** The user turns of the window and scope: how many, and their sessions (see totalsOf). */
  turnTotals(
    window: FrictionWindow,
    scope: FrictionScope,
  ): Promise<{ turns: number; sessionIds: Set<string> }> {
    return this.totalsOf(this.indices.turns, window, scope).then(({ count, sessionIds }) => ({
      turns: count,
      sessionIds,
    }));
  }

  /** The tool calls of the window and scope: how many, and their sessions (see totalsOf). */
  toolCallTotals(
    window: FrictionWindow,
    scope: FrictionScope,
  ): Promise<{ count: number; sessionIds: Set<string> }> {
    return this.totalsOf(this.indices.toolCalls, window, scope);
  }

  /**
   * The documents of an index in the window and scope: how many (a count), and their sessions
   * (a composite aggregation on sessionId, paged by its `after` key: one bucket per session).
   */
  private async totalsOf(
    index: string,
    window: FrictionWindow,
    scope: FrictionScope,
  ): Promise<{ count: number; sessionIds: Set<string> }> {
    const query = {
      bool: { filter: [inWindow('timestamp', window), ...frictionScopeFilters(scope)] },
    };
    let count: number;
    try {
      ({ count } = await this.client.count({ index, ignore_unavailable: true, query }));
    } catch (error) {
      throw classifyElasticsearchError(error);
    }
    const sessionIds = new Set<string>();
    const sources = [{ sessionId: termsSource('sessionId') }];
    for await (const page of compositePages<{ sessionId: string }>(
      this.client,
      index,
      query,
      sources,
      this.pageSize,
    )) {
      for (const bucket of page) sessionIds.add(bucket.key.sessionId);
    }
    return { count, sessionIds };
  }

  /**
   * The user turns of the window and scope in time order (then eventId), in pages of a point in
   * time: the repeated-corrections detector classifies each (the core's classification, as the
   * embedded source runs it inside SQLite). Only the fields it needs are fetched.
   */
  async *userTurns(window: FrictionWindow, scope: FrictionScope): AsyncGenerator<FrictionTurn[]> {
    const query = {
      bool: { filter: [inWindow('timestamp', window), ...frictionScopeFilters(scope)] },
    };
    const fields = [
      'tenantId',
      'projectId',
      'sessionId',
      'eventId',
      'agentId',
      'timestamp',
      'text',
    ];
    for await (const hits of this.pages<TurnSource>(this.indices.turns, query, fields, [
      { timestamp: 'asc' },
      { eventId: 'asc' },
    ])) {
      yield hits.map((turn) => ({
        tenantId: turn.tenantId,
        projectId: turn.projectId,
        sessionId: turn.sessionId,
        eventId: turn.eventId,
        agentId: turn.agentId,
        at: turn.timestamp,
        text: (turn.text ?? '').slice(0, MAX_TURN_CHARS),
      }));
    }
  }

  /**
   * Stale memories of the scope (`staleAt` before the window ends) served after they went stale
   * within the window: the memory's own counters folded with its counter document in the
   * access index (as a recall reads them), page by page of the stale memories.
   */
  async staleMemories(window: FrictionWindow, scope: FrictionScope): Promise<StaleMemoryRow[]> {
    const query = {
      bool: {
        filter: [
          { range: { staleAt: { lt: window.to, format: 'epoch_millis' } } },
          ...frictionScopeFilters(scope),
        ],
      },
    };
    const fields = [
      'tenantId',
      'projectId',
      'memoryId',
      'memoryType',
      'content',
      'staleAt',
      'lastAccessedAt',
      'accessCount',
      'provenanceSessionIds',
    ];
    const rows: StaleMemoryRow[] = [];
    for await (const page of this.pages<StaleMemorySource>(this.indices.memories, query, fields, [
      { memoryId: 'asc' },
    ])) {
      const counted = await readAccessCounters(
        this.client,
        this.indices.memoryAccess,
        page.map((memory) => memory.memoryId),
      );
      for (const stored of page) {
        const memory = withCountedAccess(stored.memoryId, stored, counted);
        const { accessCount, lastAccessedAt: at } = countsOf(memory);
        if (!(at > memory.staleAt && at >= window.from && at < window.to)) continue;
        rows.push({
          tenantId: memory.tenantId,
          projectId: memory.projectId,
          memoryId: memory.memoryId,
          memoryType: memory.memoryType,
          content: memory.content,
          staleAt: memory.staleAt,
          lastAccessedAt: at,
          accessCount,
          provenanceSessionIds: memory.provenanceSessionIds ?? [],
        });
      }
    }
    return rows.sort(
      (a, b) =>
        a.tenantId.localeCompare(b.tenantId) ||
        a.projectId.localeCompare(b.projectId) ||
        a.memoryId.localeCompare(b.memoryId),
    );
  }

  /** `_source`s matching `query` in `sort` order, `pageSize` at a time, in one point in time. */
  private async *pages<S>(
    index: string,
    query: Filter,
    fields: string[],
    sort: Record<string, 'asc' | 'desc'>[],
  ): AsyncGenerator<S[]> {
    const exists = await this.client.indices.exists({ index }).catch((error: unknown) => {
      throw classifyElasticsearchError(error);
    });
    if (!exists) return;
    let pitId: string;
    try {
      pitId = (await this.client.openPointInTime({ index, keep_alive: KEEP_ALIVE })).id;
    } catch (error) {
      throw classifyElasticsearchError(error);
    }
    let after: SortResults | undefined;
    try {
      for (;;) {
        const response = await this.client
          .search<S>({
            size: this.pageSize,
            query,
            pit: { id: pitId, keep_alive: KEEP_ALIVE },
            sort: [...sort, { _shard_doc: 'asc' }],
            _source: fields,
            track_total_hits: false,
            ...(after && { search_after: after }),
          })
          .catch((error: unknown) => {
            throw classifyElasticsearchError(error);
          });
        pitId = response.pit_id ?? pitId;
        const hits = response.hits.hits;
        if (hits.length === 0) return;
        after = hits[hits.length - 1].sort;
        yield hits.flatMap((hit) => (hit._source === undefined ? [] : [hit._source]));
        if (hits.length < this.pageSize) return;
      }
    } finally {
      await this.client.closePointInTime({ id: pitId }).catch(() => undefined);
    }
  }
}
