import { decideCrossThreadLinkAlgorithmically } from '@engram/core';
import { SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { codecOnTopic, contractCodec } from '@engram/kafka';
import { Command } from 'commander';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { threadLinkRecord, prefixedTopics } from '@engram/app-segmenter';
import { linkDecisions, registerLinksCommand } from './links.command';

const AT = Date.UTC(2026, 10, 23, 9);
const TOPIC = prefixedTopics('').threadLinks;

function published(text: string, outcome: 'CORRECT' | 'INCORRECT' | null = null) {
  const { record } = decideCrossThreadLinkAlgorithmically({
    opening: { threadId: 'new', tenantId: 't', userId: 'u', openedAt: AT, text },
    candidates: [
      {
        threadId: 'old',
        tenantId: 't',
        userId: 'u',
        lastActivityAt: AT - 7_200_000,
        recentTurns: ['fix the token refresh race in src/auth/refresh.ts during logout'],
      },
    ],
  });
  if (!record) throw new Error('expected a decision');
  const event = threadLinkRecord(record, {
    projectId: 'p',
    sessionId: 's',
    newEpisodeId: 'e2',
    linkedEpisodeId: 'e1',
  });
  return { ...event, outcome, outcomeAt: outcome ? AT + 60_000 : null };
}

describe('engram links on the embedded log', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'engram-links-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  async function writeDecisions(events: ReturnType<typeof published>[]): Promise<void> {
    const log = SqliteEventLog.open({ dataDir });
    try {
      const port = new SqliteEventLogAdapter(log);
      await port.ensureTopic({ topic: TOPIC, partitions: 3, compacted: true });
      const codec = codecOnTopic(contractCodec('memory.thread-links.v1'), TOPIC);
      for (const event of events) await port.publish(codec, [event]);
    } finally {
      log.close();
    }
  }

  it('should read the latest record of each decision, its outcome included', async () => {
    const first = published('the token refresh race in src/auth/refresh.ts came back');
    await writeDecisions([first, { ...first, outcome: 'INCORRECT', outcomeAt: AT + 1 }]);
    const log = SqliteEventLog.open({ dataDir });
    try {
      const decisions = await linkDecisions(new SqliteEventLogAdapter(log), TOPIC);
      expect(decisions).toHaveLength(1);
      expect(decisions[0]).toMatchObject({ decisionId: first.decisionId, outcome: 'INCORRECT' });
    } finally {
      log.close();
    }
  });

  it('should print the tuning report from --data-dir, with no Kafka to reach', async () => {
    await writeDecisions([published('the token refresh race in src/auth/refresh.ts came back')]);
    const lines: string[] = [];
    const print = vi.spyOn(console, 'log').mockImplementation((line: string) => lines.push(line));
    try {
      const program = new Command().exitOverride();
      registerLinksCommand(program);
      await program.parseAsync(['links', '--data-dir', dataDir, '--json'], { from: 'user' });
    } finally {
      print.mockRestore();
    }
    expect(JSON.parse(lines[0])).toMatchObject({ decisions: 1, withOutcome: 0 });
  });

  it('should report no decisions for a log the segmenter has not written links to', async () => {
    SqliteEventLog.open({ dataDir }).close();
    const lines: string[] = [];
    const print = vi.spyOn(console, 'log').mockImplementation((line: string) => lines.push(line));
    try {
      const program = new Command().exitOverride();
      registerLinksCommand(program);
      await program.parseAsync(['links', '--data-dir', dataDir, '--json'], { from: 'user' });
    } finally {
      print.mockRestore();
    }
    expect(JSON.parse(lines[0])).toMatchObject({ decisions: 0 });
  });
});
