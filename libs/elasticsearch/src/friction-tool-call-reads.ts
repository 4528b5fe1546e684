import type { Client } from '@elastic/elasticsearch';
import type {
  FailurePatternRow,
  FrictionDayCount,
  FrictionScope,
  FrictionSettings,
  FrictionWindow,
  RetryLoopRow,
} from '@engram/core';
import {
  compositePages,
  daySource,
  frictionScopeFilters,
  inWindow,
  termsSource,
} from './friction-composite';
import {
  AGENT_SAMPLE,
  failurePatternsOf,
  sampleAggregations,
  type PatternSessionKey,
} from './friction-failure-pattern-rows';
import {
  measureAggregations,
  measuredOf,
  recurringFailureDays,
  retryLoopDays,
  retryLoopsOf,
  type PatternDay,
  type TurnDay,
  type TurnDayKey,
} from './friction-tool-call-rows';
import type { Filter } from './search-filters';

/**
 * The friction report's reads of the tool-call index (distributed mode; retrieval-tool-calls.ts):
 * recurring failures, retry loops and the failure timeline, as composite aggregations paged by their `after` key
 * (one bucket per command of a turn per UTC day, or per error pattern of a session per day),
 * folded as the embedded SQL groups the failed calls. Every read filters by the scope's tenant.
 */
export class ElasticsearchToolCallReads {
  constructor(
    private readonly client: Client,
    private readonly index: string,
    private readonly pageSize: number,
  ) {}

  /**
   * Recurring failures (the embedded source's failurePatterns): one bucket per error pattern of
   * a session, with its measures and smallest message and command.
   */
  async failurePatterns(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): Promise<FailurePatternRow[]> {
    const query = this.failedCalls(window, scope, { exists: { field: 'errorPattern' } });
    const sources = ['tenantId', 'projectId', 'toolName', 'errorPattern', 'sessionId'].map(
      (field) => ({ [field]: termsSource(field) }),
    );
    const buckets = [];
    for await (const page of compositePages<PatternSessionKey>(
      this.client,
      this.index,
      query,
      sources,
      this.pageSize,
      { ...measureAggregations(settings.maxEvidence, AGENT_SAMPLE), ...sampleAggregations },
    )) {
      buckets.push(...page);
    }
    return failurePatternsOf(buckets, settings);
  }

  /** Retry habits (the embedded source's retryLoops). */
  async retryLoops(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): Promise<RetryLoopRow[]> {
    return retryLoopsOf(await this.failedTurnDays(window, scope), settings).rows;
  }

  /** Failed calls per day of a recurring pattern, then of a retry habit (as embedded). */
  async failureTimeline(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): Promise<FrictionDayCount[]> {
    const [patterns, turns] = await Promise.all([
      this.failedPatternDays(window, scope),
      this.failedTurnDays(window, scope),
    ]);
    const loops = retryLoopsOf(turns, settings);
    return [
      ...recurringFailureDays(patterns, settings.minSessionsPerFinding),
      ...retryLoopDays(turns, loops.turns),
    ];
  }

  /** The failed calls with a command, one bucket per command of a turn and day. */
  private async failedTurnDays(window: FrictionWindow, scope: FrictionScope): Promise<TurnDay[]> {
    const query = this.failedCalls(window, scope, { exists: { field: 'command' } });
    const sources = [
      ...['tenantId', 'projectId', 'toolName', 'command', 'sessionId', 'promptId'].map((field) => ({
        [field]: termsSource(field),
      })),
      { day: daySource },
    ];
    const buckets: TurnDay[] = [];
    for await (const page of compositePages<TurnDayKey>(
      this.client,
      this.index,
      query,
      sources,
      this.pageSize,
      measureAggregations(1),
    )) {
      for (const bucket of page) buckets.push({ key: bucket.key, measured: measuredOf(bucket) });
    }
    return buckets;
  }

  /** The failed calls with an error pattern, one bucket per pattern of a session and day. */
  private async failedPatternDays(
    window: FrictionWindow,
    scope: FrictionScope,
  ): Promise<PatternDay[]> {
    const query = this.failedCalls(window, scope, { exists: { field: 'errorPattern' } });
    const sources = [
      ...['tenantId', 'toolName', 'errorPattern', 'sessionId'].map((field) => ({
        [field]: termsSource(field),
      })),
      { day: daySource },
    ];
    const buckets: PatternDay[] = [];
    for await (const page of compositePages<PatternDay['key']>(
      this.client,
      this.index,
      query,
      sources,
      this.pageSize,
    )) {
      for (const bucket of page) buckets.push({ key: bucket.key, count: bucket.doc_count });
    }
    return buckets;
  }

  private failedCalls(window: FrictionWindow, scope: FrictionScope, also: Filter): Filter {
    return {
      bool: {
        filter: [
          { term: { failed: true } },
          inWindow('timestamp', window),
          ...frictionScopeFilters(scope),
          also,
        ],
      },
    };
  }
}
