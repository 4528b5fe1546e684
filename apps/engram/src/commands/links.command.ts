import { loadConfig } from '@engram/config';
import type { ThreadLinkDecision } from '@engram/contracts';
import { CompactedView, tuningReport, type EventLogPort } from '@engram/core';
import type { Command } from 'commander';
import { codecOnTopic, contractCodec } from '@engram/kafka';
import { prefixedTopics, toLinkDecisionRecord } from '@engram/app-segmenter';
import { readCommandLog } from './command-event-log';
import { DEFAULT_DATA_DIR } from './replay.command';

/** Every linking decision of the log: the latest record per decision id (outcomes included). */
export async function linkDecisions(
  log: EventLogPort,
  topic: string,
): Promise<ThreadLinkDecision[]> {
  const codec = codecOnTopic(contractCodec('memory.thread-links.v1'), topic);
  return (await new CompactedView(log, codec).refresh()).values();
}

/**
 * `engram links`: the cross-thread linking tuning report (seed 004 §2.4) over every decision in
 * `memory.thread-links.v1` — false-positive / false-negative rates at the current threshold, by
 * the outcomes recorded from follow-up prompts, and the threshold that would have cost least.
 * Embedded (the SQLite log in --data-dir) by default, like every command; --distributed: Kafka.
 */
export function registerLinksCommand(program: Command): void {
  program
    .command('links')
    .description('cross-thread linking decisions: tuning report (rates and a proposed threshold)')
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'read the decisions from the configured Kafka')
    .option('--json', 'print the report as one JSON object')
    .action(async (options: { json?: boolean; dataDir: string; distributed?: boolean }) => {
      const topic = prefixedTopics(loadConfig().topicPrefix).threadLinks;
      const decisions = await readCommandLog(
        { ...options, clientId: 'engram-links' },
        topic,
        (log) => linkDecisions(log, topic),
        () => [],
      );
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
