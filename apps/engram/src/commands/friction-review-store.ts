import type { EngramConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import type { EventLogPort, TopicCodec } from '@engram/core';
import { EmbeddedStreamPlatform, SqliteEventLog } from '@engram/embedded';
import {
  distillerCodecs,
  ensureDistillerTopics,
  prefixedDistillerTopics,
} from '@engram/app-distiller';

/** Where review proposals are: the proposals topic on an event log (embedded or Kafka). */
export interface FrictionReviewStore {
  port: EventLogPort;
  proposals: TopicCodec<Typed<'Proposal'>>;
  close(): Promise<void>;
}

/** The data directory's log, with the distiller's topics as `engram start` creates them. */
export async function embeddedFrictionReviewStore(
  dataDir: string,
  config: Pick<EngramConfig, 'topicPrefix' | 'segmenter'>,
): Promise<FrictionReviewStore> {
  const log = SqliteEventLog.open({ dataDir });
  const platform = new EmbeddedStreamPlatform(log);
  const topics = prefixedDistillerTopics(config.topicPrefix);
  try {
    await ensureDistillerTopics(platform, topics, config.segmenter.partitions);
  } catch (error) {
    log.close();
    throw error;
  }
  return {
    port: await platform.eventLog(),
    proposals: distillerCodecs(topics).proposals,
    close: () => Promise.resolve(log.close()),
  };
}
