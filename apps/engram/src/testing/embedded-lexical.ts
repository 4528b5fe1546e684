import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { parseConfig } from '@engram/config';
import { topicOfRecord, type Memory, type TopicName, type Typed } from '@engram/contracts';
import { SqliteEventLogAdapter } from '@engram/embedded';
import { contractCodec } from '@engram/kafka';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedServices, type EmbeddedServices } from '../embedded-services';

/**
 * For specs of embedded Engram end to end: every service on a temp data directory, default
 * configuration, no LLM, lexical retrieval only (no model download), a fast sweep.
 */
export interface LexicalEmbedded {
  services: EmbeddedServices;
  port: SqliteEventLogAdapter;
  /** Publishes events, each to its contract topic, in order. */
  publish(events: readonly Typed[]): Promise<void>;
  /** The latest version of every memory on memory.memories.v1. */
  memories(): Memory[];
  stop(): Promise<void>;
}

export async function startLexicalEmbedded(name: string): Promise<LexicalEmbedded> {
  const dir = mkdtempSync(join(tmpdir(), `engram-${name}-`));
  const services = await startEmbeddedServices({
    config: parseConfig({}),
    dataDir: join(dir, 'data'),
    sweepIntervalMs: 50,
    llm: null,
    retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
  });
  const port = new SqliteEventLogAdapter(services.log);
  return {
    services,
    port,
    async publish(events) {
      for (const event of events) {
        const topic = topicOfRecord(event.type).topic as TopicName;
        await port.publish(contractCodec(topic), [event] as never);
      }
    },
    memories() {
      const topic = 'memory.memories.v1';
      const partitions = services.log.endOffsets(topic).map((_, i) => i);
      return [...services.log.latestByKey(topic, partitions).values()].map(
        (value) => JSON.parse(value.toString('utf8')) as Memory,
      );
    },
    async stop() {
      await services.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
