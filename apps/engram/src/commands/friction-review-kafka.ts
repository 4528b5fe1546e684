import type { EngramConfig } from '@engram/config';
import { AvroRegistry, createKafka, KafkaEventLog, registerContractSchemas } from '@engram/kafka';
import { distillerCodecs, prefixedDistillerTopics } from '@engram/app-distiller';
import type { FrictionReviewStore } from './friction-review-store';

/**
 * Distributed mode's review store: memory.proposals.v1 on the configured Kafka, where the
 * distiller's review desk (and so the review API) reads proposals. Created like the other
 * contract topics if it is not there yet (compacted, the segmenter's partition count).
 */
export async function kafkaFrictionReviewStore(
  config: Pick<EngramConfig, 'kafka' | 'schemaRegistry' | 'topicPrefix' | 'segmenter'>,
): Promise<FrictionReviewStore> {
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'engram-friction-report' });
  const registry = new AvroRegistry(config.schemaRegistry.url);
  await registerContractSchemas(registry);
  const port = new KafkaEventLog(kafka, registry);
  await port.connect();
  const proposals = distillerCodecs(prefixedDistillerTopics(config.topicPrefix)).proposals;
  try {
    await port.ensureTopic({
      topic: proposals.topic,
      partitions: config.segmenter.partitions,
      compacted: true,
    });
  } catch (error) {
    await port.disconnect();
    throw error;
  }
  return { port, proposals, close: () => port.disconnect() };
}
