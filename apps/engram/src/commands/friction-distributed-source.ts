import {
  DownstreamUnavailableError,
  errorMessage,
  userCorrectionOf,
  type CorrectionSink,
  type FailurePatternRow,
  type FrictionDayCount,
  type FrictionScope,
  type FrictionSettings,
  type FrictionSignalGap,
  type FrictionSource,
  type FrictionTotals,
  type FrictionWindow,
  type RetryLoopRow,
  type StaleMemoryRow,
} from '@engram/core';
import type { ElasticsearchFrictionReads } from '@engram/elasticsearch';
import type { Neo4jFrictionReads } from '@engram/neo4j';

/**
 * What distributed mode cannot read as the embedded report does, and why: the indexer keeps user
 * turns and memories in Elasticsearch, the observer keeps per-session facts in Neo4j, and
 * neither keeps every tool call. Listed in every output of the report and in
 * docs/friction-report.md.
 */
export const DISTRIBUTED_FRICTION_GAPS: readonly FrictionSignalGap[] = [
  {
    signal: 'totals',
    partial: true,
    reason:
      'events are the user turns of the window (Elasticsearch) plus the tool calls of the sessions ' +
      'active in it (the observer counts them per session, in the graph); agent and system ' +
      'prompts and lifecycle events are indexed nowhere, so the count is lower than in embedded mode',
  },
  {
    signal: 'failure-cost',
    partial: true,
    reason:
      "recurring failures come from the observer graph's error patterns per session, which keep " +
      'no tool time, tokens, event ids or failing command: the cost counts occurrences only, the ' +
      'evidence names sessions (not events), a failure is not merged with a retry habit of the ' +
      "same command, a session's occurrences count whole when its last hit is in the window, and " +
      'errors still open in sessions the observer has not closed are not in the graph yet',
  },
  {
    signal: 'retry-loops',
    partial: false,
    reason:
      'a retry habit is one command failing again and again within one user turn; the graph ' +
      'keeps errors by pattern per session, not the command and turn of each failed call, and ' +
      'tool calls are not indexed in Elasticsearch',
  },
  {
    signal: 'failure-timeline',
    partial: false,
    reason:
      'the graph keeps the last hit of an error pattern per session, not the time of each failed ' +
      'call: the chart shows corrections and stale memories only',
  },
];

export interface DistributedFrictionStores {
  elasticsearch: ElasticsearchFrictionReads;
  neo4j: Neo4jFrictionReads;
  /** Where each store is, for the message when one cannot be reached. */
  endpoints: { elasticsearch: string; neo4j: string };
  close(): Promise<void>;
}

/**
 * The friction source of distributed mode: Elasticsearch aggregations and paged reads (user
 * turns, stale memories) and Neo4j aggregations (sessions, error patterns), composed behind the
 * core's port. The signals neither store holds are declared (`gaps`), never faked.
 */
export class DistributedFrictionSource implements FrictionSource {
  readonly mode = 'distributed';

  constructor(private readonly stores: DistributedFrictionStores) {}

  gaps(): readonly FrictionSignalGap[] {
    return DISTRIBUTED_FRICTION_GAPS;
  }

  /** Sessions: those of the graph and of the user turns, once each; events: see the gap. */
  async totals(window: FrictionWindow, scope: FrictionScope): Promise<FrictionTotals> {
    const [graph, turns] = await Promise.all([
      this.neo4j(() => this.stores.neo4j.sessions(window, scope)),
      this.elasticsearch(() => this.stores.elasticsearch.turnTotals(window, scope)),
    ]);
    const sessions = new Set(graph.sessionIds);
    for (const sessionId of turns.sessionIds) sessions.add(sessionId);
    return { sessions: sessions.size, events: graph.toolCalls + turns.turns };
  }

  failurePatterns(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): Promise<FailurePatternRow[]> {
    return this.neo4j(() => this.stores.neo4j.failurePatterns(window, scope, settings));
  }

  /** Not available (DISTRIBUTED_FRICTION_GAPS: retry-loops). */
  retryLoops(): RetryLoopRow[] {
    return [];
  }

  /** Not available (DISTRIBUTED_FRICTION_GAPS: failure-timeline). */
  failureTimeline(): FrictionDayCount[] {
    return [];
  }

  /** The user turns, page by page, through the core's correction classification. */
  corrections(window: FrictionWindow, scope: FrictionScope, sink: CorrectionSink): Promise<number> {
    return this.elasticsearch(async () => {
      let count = 0;
      for await (const turns of this.stores.elasticsearch.userTurns(window, scope)) {
        for (const turn of turns) {
          const correction = userCorrectionOf(turn.text);
          if (correction === null) continue;
          sink.add({
            ...correction,
            tenantId: turn.tenantId,
            projectId: turn.projectId,
            sessionId: turn.sessionId,
            eventId: turn.eventId,
            agentId: turn.agentId,
            at: turn.at,
          });
          count += 1;
        }
      }
      return count;
    });
  }

  staleMemories(window: FrictionWindow, scope: FrictionScope): Promise<StaleMemoryRow[]> {
    return this.elasticsearch(() => this.stores.elasticsearch.staleMemories(window, scope));
  }

  close(): Promise<void> {
    return this.stores.close();
  }

  private elasticsearch<T>(read: () => Promise<T>): Promise<T> {
    return withEndpoint(read, `Elasticsearch at ${this.stores.endpoints.elasticsearch}`);
  }

  private neo4j<T>(read: () => Promise<T>): Promise<T> {
    return withEndpoint(read, `Neo4j at ${this.stores.endpoints.neo4j}`);
  }
}

/** An unreachable store's error, saying which store and where (the configured endpoint). */
async function withEndpoint<T>(read: () => Promise<T>, store: string): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof DownstreamUnavailableError) {
      throw new DownstreamUnavailableError(
        `cannot reach ${store}: ${errorMessage(error)}`,
        {},
        { cause: error },
      );
    }
    throw error;
  }
}
