import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import type { RankedMemory } from '@engram/core';
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
  /** The data directory the services run on (an `engram hook --data-dir`). */
  dataDir: string;
  port: SqliteEventLogAdapter;
  /** Publishes events, each to its contract topic, in order. */
  publish(events: readonly Typed[]): Promise<void>;
  /** The latest version of every memory on memory.memories.v1. */
  memories(): Memory[];
  /** The ids InjectForFile on the service answers for `filePath`. */
  injected(scope: Scope, filePath: string): Promise<string[]>;
  /** Recall on the service, the memories tier (top 5). */
  recalled(scope: Scope, query: string): Promise<RankedMemory[]>;
  stop(): Promise<void>;
}

type Scope = { tenantId: string; projectId: string };

export async function startLexicalEmbedded(name: string): Promise<LexicalEmbedded> {
  const dir = mkdtempSync(join(tmpdir(), `engram-${name}-`));
  const dataDir = join(dir, 'data');
  const services = await startEmbeddedServices({
    config: parseConfig({}),
    dataDir,
    sweepIntervalMs: 50,
    llm: null,
    retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
  });
  const port = new SqliteEventLogAdapter(services.log);
  const { recall } = services.retrieval;
  return {
    services,
    dataDir,
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
    async injected(scope, filePath) {
      const { memories } = await recall.context.injectForFile({ ...scope, filePath });
      return memories.map((m) => m.memory.memoryId);
    },
    async recalled(scope, query) {
      const { results } = await recall.service.recall({ ...scope, query, tier: 'memories', k: 5 });
      return results.flatMap((hit) => (hit.tier === 'memories' ? [hit.memory] : []));
    },
    async stop() {
      await services.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
