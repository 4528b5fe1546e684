import { EventPublisher } from '@engram/kafka';
import {
  ensureSegmenterTopics,
  segmenterCodecs,
} from '../../../apps/segmenter/src/segmenter.topology';
import type { SegmenterTopics } from '../../../apps/segmenter/src/segmenter.stage';
import { readAllCommitted, testKafka, testRegistry, withTestPlatform } from './kafka-fixtures';
import type { RecordedStream } from './recorded-sessions';

/** A connected publisher of recorded streams (or parts of one) to the segmenter's input topics. */
export async function segmenterPublisher(topics: SegmenterTopics) {
  const publisher = new EventPublisher(testKafka(), testRegistry());
  const codecs = segmenterCodecs(topics);
  await publisher.connect();
  return {
    async publish(stream: RecordedStream): Promise<void> {
      await publisher.publish(codecs.prompts, stream.prompts);
      await publisher.publish(codecs.toolCalls, stream.toolCalls);
      await publisher.publish(codecs.lifecycle, stream.lifecycle);
    },
    disconnect: () => publisher.disconnect(),
  };
}

/** Creates the segmenter's topics and publishes `stream` to them. */
export async function publishRecording(
  topics: SegmenterTopics,
  stream: RecordedStream,
  partitions: number,
): Promise<void> {
  await withTestPlatform((platform) => ensureSegmenterTopics(platform, topics, partitions));
  const publisher = await segmenterPublisher(topics);
  try {
    await publisher.publish(stream);
  } finally {
    await publisher.disconnect();
  }
}

/** A boundary record by what it says (chaining parents depend on cross-partition timing). */
export async function boundaryLines(topics: SegmenterTopics, atLeast: number): Promise<string[]> {
  const registry = testRegistry();
  const messages = await readAllCommitted(testKafka(), topics.boundaries, atLeast);
  const lines = await Promise.all(
    messages.map(async (message) => {
      const value = await registry.decode<Record<string, Record<string, unknown>>>(message.value);
      const [[type, record]] = Object.entries(value);
      const { parentEpisodeId: _ignored, ...rest } = record;
      return `${type} ${JSON.stringify(rest)}`;
    }),
  );
  return lines.sort();
}
