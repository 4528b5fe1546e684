import type { Typed } from '@engram/contracts';
import { KeyedChangelogState, uuidV5, type TopicCodec } from '@engram/core';
import type { AnyStageOutput, Delivered, ExactlyOnceStage, StageOutput } from '@engram/core';
import { valueSubject } from '@engram/core';
import { Logger } from '@nestjs/common';

/**
 * An episode's narrative, re-keyed by episodeId: the distiller's sessions live in sessionId
 * partitions, memory.episodes.v1 in episodeId partitions, so the narrative travels through this
 * internal topic to the partition of its episode, where EpisodeSummaryStage joins the two.
 */
export interface EpisodeNarrative {
  eventId: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  episodeId: string;
  summary: string;
  /** Time of the window's last event: not invented. */
  timestamp: number;
}

const NARRATIVE_SCHEMA = {
  type: 'record',
  name: 'EpisodeNarrative',
  namespace: 'engram.distiller',
  doc: "Internal to the distiller: an episode's narrative, keyed by episodeId.",
  fields: [
    { name: 'eventId', type: 'string' },
    { name: 'tenantId', type: 'string' },
    { name: 'projectId', type: 'string' },
    { name: 'sessionId', type: 'string' },
    { name: 'episodeId', type: 'string' },
    { name: 'summary', type: 'string' },
    { name: 'timestamp', type: { type: 'long', logicalType: 'timestamp-millis' } },
  ],
};

export function narrativeCodec(topic: string): TopicCodec<EpisodeNarrative> {
  return {
    topic,
    subject: valueSubject(topic),
    schema: NARRATIVE_SCHEMA,
    toAvro: (event) => event,
    fromAvro: (value) => value as EpisodeNarrative,
    key: (event) => event.episodeId,
    validate: (event) =>
      event.episodeId === '' || event.eventId === '' ? ['episodeId and eventId are required'] : [],
  };
}

/** What waits in the changelog for its other half (key: episodeId). */
interface JoinRecord {
  partition: number;
  episode: Typed<'Episode'> | null;
  narrative: EpisodeNarrative | null;
  /** Processing time of the first half: a half whose other never comes goes after a while. */
  since: number;
}

export interface EpisodeSummaryTopics {
  episodes: string;
  narratives: string;
  /** Compacted, partitioned like the episodes topic. */
  changelog: string;
}

/**
 * The join's topics among the distiller's: its halves go to its own changelog (the distiller's
 * is partitioned by session, and a restore reads only the changelog it was written to).
 */
export function summaryTopicsOf(topics: {
  episodes: string;
  narratives: string;
  summaryChangelog: string;
}): EpisodeSummaryTopics {
  return {
    episodes: topics.episodes,
    narratives: topics.narratives,
    changelog: topics.summaryChangelog,
  };
}

export interface EpisodeSummaryOptions {
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
  episodes: TopicCodec<Typed<'Episode'>>;
  /** How long a half waits for the other (processing time; default a day). */
  waitMs?: number;
  clock?: () => number;
}

/** The agentId of the annotated episodes this stage writes. */
export const DISTILLER_AGENT_ID = 'engram-distiller';

/**
 * Annotates episodes with their narrative (SPEC §4.4 `summary`): joins memory.episodes.v1 (the
 * segmenter's annotated episode, `summary` null) with the distiller's narratives, both keyed by
 * episodeId, and writes the episode again with its summary — after the segmenter's version, so
 * it is the one a compacted topic and a last-write-wins index keep. An episode that already has a
 * summary (this stage's own output coming back) is final. Exactly-once like the main stage: the
 * waiting halves live in a compacted changelog written in the transaction of the offsets; an
 * aborted transaction drops the state in memory, the next batch restores it.
 */
export class EpisodeSummaryStage {
  private readonly logger = new Logger('EpisodeSummary');
  private readonly state: KeyedChangelogState<JoinRecord>;
  readonly counters = { annotated: 0, expired: 0 };

  constructor(
    topics: EpisodeSummaryTopics,
    private readonly options: EpisodeSummaryOptions,
  ) {
    this.state = new KeyedChangelogState({
      changelogTopic: topics.changelog,
      restore: options.restore,
      accepts: () => true,
      onUnreadable: (key, error) =>
        this.logger.error(`unreadable changelog record ${key} skipped: ${String(error)}`),
    });
  }

  readonly episodeStage: ExactlyOnceStage<Typed<'Episode'>> = {
    transform: (items) => this.run(items, (item) => this.onEpisode(item)),
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly narrativeStage: ExactlyOnceStage<EpisodeNarrative> = {
    transform: (items) => this.run(items, (item) => this.onNarrative(item)),
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.state.onAssignment(partitions);
  }

  /** The timer: halves that waited too long go (an episode distilled to nothing, say). */
  sweep(): AnyStageOutput[] {
    const horizon = this.now() - (this.options.waitMs ?? 24 * 60 * 60_000);
    for (const { key, partition, record } of this.state.ownedRecords()) {
      if (record.since > horizon) continue;
      this.state.remove(partition, key);
      this.counters.expired += 1;
    }
    return this.outputs([]);
  }

  committed(): void {
    this.state.commit();
  }

  aborted(): void {
    this.state.abort();
  }

  // No `begin` per batch: the episodes and the narratives are two stages of one processor, whose
  // batches may share a transaction; what they stage is committed (or aborted) together.
  private async run<E>(
    items: Delivered<E>[],
    handle: (item: Delivered<E>) => Typed<'Episode'> | null,
  ): Promise<AnyStageOutput[]> {
    await this.state.restore(new Set(items.map((item) => item.partition)));
    const annotated: Typed<'Episode'>[] = [];
    for (const item of items) {
      const episode = handle(item);
      if (episode) annotated.push(episode);
    }
    return this.outputs(annotated);
  }

  private onEpisode(item: Delivered<Typed<'Episode'>>): Typed<'Episode'> | null {
    const episode = item.event;
    const current = this.current(episode.episodeId, item.partition);
    // Final (this stage's own output coming back, or a summary from elsewhere): nothing to do.
    if (episode.summary !== null) return null;
    return this.join(item.partition, { ...(current ?? this.fresh(item.partition)), episode });
  }

  private onNarrative(item: Delivered<EpisodeNarrative>): Typed<'Episode'> | null {
    const narrative = item.event;
    const current = this.current(narrative.episodeId, item.partition);
    return this.join(item.partition, { ...(current ?? this.fresh(item.partition)), narrative });
  }

  /** Both halves here: the annotated episode, and the state goes; else the half waits. */
  private join(partition: number, record: JoinRecord): Typed<'Episode'> | null {
    const episodeId = record.episode?.episodeId ?? record.narrative!.episodeId;
    const { episode, narrative } = record;
    if (!episode || !narrative) {
      this.state.stage(episodeId, record);
      return null;
    }
    // The narrative stays (until the sweep's horizon): a later version of the episode from the
    // segmenter — re-annotated, linked — must get its summary again, or it would replace the
    // annotated one without it.
    this.state.stage(episodeId, { ...record, episode: null });
    this.counters.annotated += 1;
    return {
      ...episode,
      eventId: uuidV5(`episode-summary:${episode.eventId}:${narrative.eventId}`),
      agentId: DISTILLER_AGENT_ID,
      summary: narrative.summary,
    };
  }

  private current(episodeId: string, partition: number): JoinRecord | null {
    return this.state.current(partition, episodeId) ?? null;
  }

  private fresh(partition: number): JoinRecord {
    return { partition, episode: null, narrative: null, since: this.now() };
  }

  private outputs(annotated: Typed<'Episode'>[]): AnyStageOutput[] {
    return [
      { codec: this.options.episodes, events: annotated } satisfies StageOutput,
      this.state.changelog(),
    ];
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }
}
