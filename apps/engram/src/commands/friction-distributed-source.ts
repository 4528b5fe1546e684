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

/**
 * What distributed mode cannot read as the embedded report does, and why: the indexer keeps user
 * turns, memories and tool calls in Elasticsearch; agent and system prompts and lifecycle events
 * are kept nowhere on the servers. Listed in every output of
 * the report and in docs/friction-report.md.
 */
export const DISTRIBUTED_FRICTION_GAPS: readonly FrictionSignalGap[] = [
  {
    signal: 'totals',
    partial: true,
    reason:
      'events are the user turns and the tool calls of the window (Elasticsearch); agent and ' +
      'system prompts and lifecycle events are indexed nowhere, so the count is lower than in ' +
      'embedded mode (and a session with none of the first two is not counted)',
  },
];

export interface DistributedFrictionStores {
  elasticsearch: ElasticsearchFrictionReads;
  /** Where the store is, for the message when it cannot be reached. */
  endpoints: { elasticsearch: string };
  close(): Promise<void>;
}

/**
 * The friction source of distributed mode: Elasticsearch aggregations (tool calls, user turns'
 * sessions) and paged reads (user turns, stale memories) behind the core's port. The signals the
 * servers do not hold are declared (`gaps`), never faked.
 */
export class DistributedFrictionSource implements FrictionSource {
  readonly mode = 'distributed';

  constructor(private readonly stores: DistributedFrictionStores) {}

  gaps(): readonly FrictionSignalGap[] {
    return DISTRIBUTED_FRICTION_GAPS;
  }

  /** Sessions: those of the tool calls and of the user turns, once each; events: see the gap. */
  async totals(window: FrictionWindow, scope: FrictionScope): Promise<FrictionTotals> {
    const [calls, turns] = await this.elasticsearch(() =>
      Promise.all([
        this.stores.elasticsearch.toolCallTotals(window, scope),
        this.stores.elasticsearch.turnTotals(window, scope),
      ]),
    );
    const sessions = new Set(calls.sessionIds);
    for (const sessionId of turns.sessionIds) sessions.add(sessionId);
    return { sessions: sessions.size, events: calls.count + turns.turns };
  }

  /** Aggregations over the tool-call index (a bucket per error pattern of a session). */
  failurePatterns(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): Promise<FailurePatternRow[]> {
    return this.elasticsearch(() =>
      this.stores.elasticsearch.toolCalls.failurePatterns(window, scope, settings),
    );
  }

  /** Aggregations over the tool-call index (as the embedded SQL over the event log). */
  retryLoops(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): Promise<RetryLoopRow[]> {
    return this.elasticsearch(() =>
      this.stores.elasticsearch.toolCalls.retryLoops(window, scope, settings),
    );
  }

  /** Aggregations over the tool-call index (a bucket per turn or session and UTC day). */
  failureTimeline(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): Promise<FrictionDayCount[]> {
    return this.elasticsearch(() =>
      this.stores.elasticsearch.toolCalls.failureTimeline(window, scope, settings),
    );
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
