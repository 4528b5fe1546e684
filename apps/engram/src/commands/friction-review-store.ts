import type { EngramConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import type { EventLogPort, TopicCodec } from '@engram/core';
import { SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import {
  distillerCodecs,
  ensureEmbeddedDistillerTopics,
  prefixedDistillerTopics,
} from '@engram/app-distiller';

/** Where review proposals are: the proposals topic on an event log (embedded or Kafka). */
export interface FrictionReviewStore {
  port: EventLogPort;
  proposals: TopicCodec<Typed<'Proposal'>>;
  close(): Promise<void>;
}

/** The data directory's log, with the distiller's topics as `engram start` creates them. */
export function embeddedFrictionReviewStore(
  dataDir: string,
  config: Pick<EngramConfig, 'topicPrefix' | 'segmenter'>,
): FrictionReviewStore {
  const log = SqliteEventLog.open({ dataDir });
  const topics = prefixedDistillerTopics(config.topicPrefix);
  ensureEmbeddedDistillerTopics(log, topics, config.segmenter.partitions);
  return {
    port: new SqliteEventLogAdapter(log),
    proposals: distillerCodecs(topics).proposals,
    close: () => Promise.resolve(log.close()),
  };
}
