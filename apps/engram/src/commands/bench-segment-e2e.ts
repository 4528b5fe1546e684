import type { EngramConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import { segmenterSettings, type SegmenterPrompt } from '@engram/core';
import { createKafka, EventPublisher, KafkaStreamPlatform } from '@engram/kafka';
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import {
  prefixedTopics,
  ensureSegmenterTopics,
  segmenterCodecs,
  startSegmenter,
} from '@engram/app-segmenter';

export interface SegmentEndToEndBench {
  benchmark: 'segment-e2e';
  events: number;
  prompts: number;
  toolCalls: number;
  partitions: number;
  publishPerSecond: number;
  eventsPerSecond: number;
  seconds: number;
  /** Kafka transactions the service committed (batches and timer runs). */
  transactions: number;
  /** Service start-up until it consumes (not in `seconds`). */
  startupSeconds: number;
  maxLag: number;
  lagSamples: number[];
  cores: number;
}

function toolCallFor(prompt: SegmenterPrompt, step: number): Typed<'ToolCallObserved'> {
  return {
    type: 'ToolCallObserved',
    eventId: randomUUID(),
    tenantId: prompt.tenantId,
    projectId: prompt.projectId,
    sessionId: prompt.sessionId,
    agentId: prompt.agentId,
    userId: prompt.userId,
    timestamp: prompt.timestamp + 1_000 * (step + 1),
    schemaVersion: 1,
    promptId: prompt.promptId,
    stepIndex: step,
    toolName: step === 0 ? 'Read' : 'Edit',
    filePaths: [`src/module-${prompt.promptId % 7}/file.ts`],
    command: null,
    argsJson: '{}',
    outcome: 'ok',
    errorMessage: null,
    durationMs: 40,
    tokensUsed: null,
    mcp: false,
  };
}

/**
 * Events/s through the real pipeline: prompts and tool calls published in Avro through the
 * Schema Registry, then the segmenter service (exactly-once, changelog) started on them; the
 * clock runs from start until the group's committed offsets reach the end of every input.
 */
export async function benchSegmentEndToEnd(
  config: EngramConfig,
  prompts: SegmenterPrompt[],
  partitions = 3,
): Promise<SegmentEndToEndBench> {
  const prefix = `bench-${Date.now().toString(36)}.`;
  const topics = prefixedTopics(prefix);
  const groupId = `${prefix}segmenter`;
  const codecs = segmenterCodecs(topics);
  const platform = await KafkaStreamPlatform.connect({
    brokers: config.kafka.brokers,
    registryUrl: config.schemaRegistry.url,
    clientId: `${prefix}bench`,
  });
  const runtimeOptions = {
    platform,
    settings: segmenterSettings(),
    topics,
    groupId,
    partitions,
    sweepIntervalMs: 5_000,
  };
  const promptEvents = prompts.map((p) => ({
    type: 'PromptSubmitted' as const,
    ...p,
    schemaVersion: 1,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
  }));
  const toolCalls = prompts.flatMap((p) => [toolCallFor(p, 0), toolCallFor(p, 1)]);
  const events = promptEvents.length + toolCalls.length;

  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: `${prefix}bench` });
  await ensureSegmenterTopics(platform, topics, partitions);
  const admin = kafka.admin();
  await admin.connect();
  const lag = async (): Promise<number> => {
    let total = 0;
    for (const topic of [topics.prompts, topics.toolCalls]) {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      for (const end of ends) {
        const done = committed?.partitions.find((p) => p.partition === end.partition)?.offset;
        total += Number(end.high) - Math.max(0, Number(done ?? 0));
      }
    }
    return total;
  };

  // Catch-up throughput, the usual measure of a stream processor: the inputs are published
  // first (their rate is reported apart), then the service starts on the backlog. Start-up
  // (schemas, topics, group join) is timed apart too; the clock runs from the moment the service
  // is consuming until every input offset is committed.
  const publisher = new EventPublisher(kafka, platform.registry);
  await publisher.connect();
  const publishStart = process.hrtime.bigint();
  try {
    for (let i = 0; i < promptEvents.length; i += 2_000) {
      await publisher.publish(codecs.prompts, promptEvents.slice(i, i + 2_000));
    }
    for (let i = 0; i < toolCalls.length; i += 2_000) {
      await publisher.publish(codecs.toolCalls, toolCalls.slice(i, i + 2_000));
    }
  } finally {
    await publisher.disconnect();
  }
  const publishSeconds = Number(process.hrtime.bigint() - publishStart) / 1e9;

  const startupStart = process.hrtime.bigint();
  const runtime = await startSegmenter(runtimeOptions);
  const started = process.hrtime.bigint();
  const startupSeconds = Number(started - startupStart) / 1e9;
  const lagSamples: number[] = [];
  let seconds: number;
  let transactions: number;
  try {
    for (;;) {
      const current = await lag();
      lagSamples.push(current);
      if (current <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    seconds = Number(process.hrtime.bigint() - started) / 1e9;
    transactions = runtime.processor.counters.transactions;
  } finally {
    await runtime.stop();
    await admin.disconnect();
    await platform.close();
  }
  return {
    benchmark: 'segment-e2e',
    events,
    prompts: promptEvents.length,
    toolCalls: toolCalls.length,
    partitions,
    publishPerSecond: Math.round(events / publishSeconds),
    eventsPerSecond: Math.round(events / seconds),
    seconds: Number(seconds.toFixed(2)),
    startupSeconds: Number(startupSeconds.toFixed(2)),
    transactions,
    maxLag: Math.max(...lagSamples),
    lagSamples: lagSamples.filter((_, i) => i % Math.ceil(lagSamples.length / 10) === 0),
    cores: cpus().length,
  };
}
