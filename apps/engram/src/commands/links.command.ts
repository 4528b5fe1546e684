import { loadConfig } from '@engram/config';
import type { ThreadLinkDecision } from '@engram/contracts';
import { tuningReport } from '@engram/core';
import { AvroRegistry, contractCodec, createKafka, readChangelog } from '@engram/kafka';
import type { Command } from 'commander';
import { toLinkDecisionRecord } from '../../../segmenter/src/thread-linker';

/**
 * `engram links`: the cross-thread linking tuning report (seed 004 §2.4) over every decision in
 * `memory.thread-links.v1` — false-positive / false-negative rates at the current threshold, by
 * the outcomes recorded from follow-up prompts, and the threshold that would have cost least.
 */
export function registerLinksCommand(program: Command): void {
  program
    .command('links')
    .description('cross-thread linking decisions: tuning report (rates and a proposed threshold)')
    .option('--json', 'print the report as one JSON object')
    .action(async (options: { json?: boolean }) => {
      const decisions = await readDecisions();
      const report = tuningReport(decisions.map(toLinkDecisionRecord));
      if (options.json) {
        console.log(JSON.stringify(report));
        return;
      }
      const rate = (value: number | null) => (value === null ? 'n/a' : value.toFixed(3));
      console.log(
        `${report.decisions} decisions, ${report.withOutcome} with an outcome ` +
          `(${report.related} related, ${report.unrelated} unrelated pairs)\n` +
          `threshold ${report.currentThreshold}: false positives ${rate(report.current.falsePositiveRate)}, ` +
          `false negatives ${rate(report.current.falseNegativeRate)}\n` +
          `proposed ${report.proposedThreshold}: false positives ${rate(report.proposed.falsePositiveRate)}, ` +
          `false negatives ${rate(report.proposed.falseNegativeRate)}` +
          (report.enoughData ? '' : `\n(too few outcomes to act on: at least 20 are needed)`),
      );
    });
}

async function readDecisions(): Promise<ThreadLinkDecision[]> {
  const config = loadConfig();
  const codec = contractCodec('memory.thread-links.v1');
  const topic = config.topicPrefix + codec.topic;
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'engram-links' });
  const admin = kafka.admin();
  await admin.connect();
  let partitions: number[];
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(topic)) return [];
    partitions = (await admin.fetchTopicOffsets(topic)).map((p) => p.partition);
  } finally {
    await admin.disconnect();
  }
  const registry = new AvroRegistry(config.schemaRegistry.url);
  const values = await readChangelog(kafka, topic, partitions);
  const decisions: ThreadLinkDecision[] = [];
  for (const value of values.values()) {
    decisions.push(codec.fromAvro(await registry.decode(value, codec.schema)));
  }
  return decisions;
}
