// The segmenter's ExactlyOnceStage, unchanged, on the embedded log: the proof that a stage written
// for Kafka runs on the SQLite processor (SPEC §2: "two ways to run, one code path").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redactSecrets, segmenterSettings } from '@engram/core';
import {
  EmbeddedExactlyOnceProcessor,
  SqliteEventLog,
  SqliteEventLogAdapter,
} from '@engram/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { segmenterCodecs } from './segmenter.topology';
import {
  DEFAULT_SEGMENTER_TOPICS,
  isLinkStateKey,
  SegmenterStage,
  type InputPositions,
  type SegmenterTopics,
} from './segmenter.stage';
import { recordedStream } from '../../../test/integration/support/recorded-sessions';

const SESSIONS = 10;
const PARTITIONS = 3;
const GROUP = 'engram-segmenter';

/** The wiring startSegmenter does for Kafka, done for the embedded log. */
function embeddedSegmenter(log: SqliteEventLog, topics: SegmenterTopics, maxBatchRecords = 500) {
  const codecs = segmenterCodecs(topics);
  const positions: InputPositions = {
    endOffsets: (partition) =>
      Promise.resolve({
        prompts: log.endOffsets(topics.prompts)[partition],
        toolCalls: log.endOffsets(topics.toolCalls)[partition],
      }),
    committedOffsets: (partitions) => {
      const prompts = log.committedOffsets(GROUP, topics.prompts);
      const toolCalls = log.committedOffsets(GROUP, topics.toolCalls);
      return Promise.resolve(
        new Map(
          partitions.map((p) => [
            p,
            { prompts: prompts.get(p) ?? 0, toolCalls: toolCalls.get(p) ?? 0 },
          ]),
        ),
      );
    },
  };
  const stage = new SegmenterStage(
    topics,
    codecs,
    segmenterSettings(),
    (partitions) => Promise.resolve(log.latestByKey(topics.changelog, partitions)),
    (text) => redactSecrets(text).text,
    positions,
  );
  const processor = new EmbeddedExactlyOnceProcessor(log, {
    groupId: GROUP,
    service: 'segmenter',
    retry: { initialMs: 10, maxMs: 100 },
    maxBatchRecords,
    onAssignment: (assignment) => stage.onAssignment(assignment[topics.prompts] ?? []),
  })
    .subscribe(codecs.prompts, stage.promptStage)
    .subscribe(codecs.toolCalls, stage.toolCallStage)
    .subscribe(codecs.lifecycle, stage.lifecycleStage);
  const sweep = () =>
    processor.produceTransactionally(() => stage.sweep(), {
      onCommitted: () => stage.committed(),
      onAborted: () => stage.aborted(),
    });
  return { codecs, stage, processor, sweep };
}

async function caughtUp(log: SqliteEventLog, topics: SegmenterTopics): Promise<void> {
  const inputs = [topics.prompts, topics.toolCalls, topics.lifecycle];
  const deadline = Date.now() + 20_000;
  for (;;) {
    const done = inputs.every((topic) => {
      const committed = log.committedOffsets(GROUP, topic);
      return log.endOffsets(topic).every((end, p) => (committed.get(p) ?? 0) === end);
    });
    if (done) return;
    if (Date.now() > deadline) throw new Error('the segmenter did not catch up');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A boundary by what it says (chaining parents depend on cross-partition timing). */
function boundaryLines(log: SqliteEventLog, topics: SegmenterTopics): string[] {
  return [...log.replay(topics.boundaries)]
    .map((record) => {
      const { parentEpisodeId: _ignored, ...rest } = JSON.parse(String(record.value)) as Record<
        string,
        unknown
      >;
      return JSON.stringify(rest);
    })
    .sort();
}

describe('SegmenterStage on the embedded exactly-once processor', () => {
  const topics = DEFAULT_SEGMENTER_TOPICS;
  const stream = recordedStream(SESSIONS);
  let dirs: string[] = [];
  let logs: SqliteEventLog[] = [];

  beforeEach(() => {
    dirs = [];
    logs = [];
  });

  afterEach(() => {
    for (const log of logs) log.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function freshLog(): Promise<SqliteEventLog> {
    const dir = mkdtempSync(join(tmpdir(), 'engram-seg-'));
    dirs.push(dir);
    const log = SqliteEventLog.open({ dataDir: dir });
    logs.push(log);
    const adapter = new SqliteEventLogAdapter(log);
    const compacted = new Set([topics.episodes, topics.threadLinks, topics.changelog]);
    for (const topic of Object.values(topics) as string[]) {
      await adapter.ensureTopic({ topic, partitions: PARTITIONS, compacted: compacted.has(topic) });
    }
    const codecs = segmenterCodecs(topics);
    await adapter.publish(codecs.prompts, stream.prompts);
    await adapter.publish(codecs.toolCalls, stream.toolCalls);
    await adapter.publish(codecs.lifecycle, stream.lifecycle);
    return log;
  }

  it('should segment recorded sessions into EpisodeOpened / EpisodeClosed records and annotated episodes', async () => {
    const log = await freshLog();
    const { processor, sweep } = embeddedSegmenter(log, topics);
    try {
      await processor.start();
      await caughtUp(log, topics);
      // The timer's job: SessionEnded takes effect once the session's inputs are committed.
      await sweep();
    } finally {
      await processor.stop();
    }

    const boundaries = [...log.replay(topics.boundaries)].map(
      (r) => JSON.parse(String(r.value)) as { type: string; reason: string; sessionId: string },
    );
    const opened = boundaries.filter((b) => b.type === 'EpisodeOpened');
    const closed = boundaries.filter((b) => b.type === 'EpisodeClosed');
    expect(opened.length).toBeGreaterThanOrEqual(SESSIONS * 3);
    expect(closed.filter((b) => b.reason === 'session_end')).toHaveLength((SESSIONS * 4) / 5);
    expect(closed.some((b) => b.reason === 'intent_shift')).toBe(true);
    // Every record sits on its session's partition, as on Kafka.
    for (const record of log.replay(topics.boundaries)) {
      const { sessionId } = JSON.parse(String(record.value)) as { sessionId: string };
      expect(record.key).toBe(sessionId);
    }
    const lines = boundaryLines(log, topics);
    expect(new Set(lines).size).toBe(lines.length);

    // One annotated episode per close; ended sessions leave the state changelog (tombstones).
    const episodes = [...log.replay(topics.episodes)];
    expect(episodes).toHaveLength(closed.length);
    // Beside the sessions, the changelog keeps the link state (chaining, recent threads).
    const open = [0, 1, 2].flatMap((p) => [...log.latestByKey(topics.changelog, [p]).keys()]);
    expect(open.some(isLinkStateKey)).toBe(true);
    expect(open.filter((key) => !isLinkStateKey(key)).sort()).toEqual(
      [...new Set(stream.prompts.map((p) => p.sessionId))]
        .filter((s) => !stream.lifecycle.some((e) => e.sessionId === s))
        .sort(),
    );
    expect(log.topic(`${topics.prompts}.dlq`)).toBeDefined();
    expect(log.endOffsets(`${topics.prompts}.dlq`)).toEqual([0]);
  });

  it('should give the same boundaries when stopped mid-stream and restarted from the changelog', async () => {
    const reference = await freshLog();
    const once = embeddedSegmenter(reference, topics);
    await once.processor.start();
    await caughtUp(reference, topics);
    await once.sweep();
    await once.processor.stop();
    const expected = boundaryLines(reference, topics);

    const log = await freshLog();
    const first = embeddedSegmenter(log, topics, 7);
    await first.processor.start();
    const deadline = Date.now() + 20_000;
    while (first.processor.counters.transactions < 6 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await first.processor.stop();
    const partly = boundaryLines(log, topics).length;

    // A new process: fresh stage, state restored from the changelog, offsets from the log.
    const second = embeddedSegmenter(log, topics, 7);
    await second.processor.start();
    await caughtUp(log, topics);
    await second.sweep();
    await second.processor.stop();

    expect(partly).toBeLessThan(expected.length);
    expect(boundaryLines(log, topics)).toEqual(expected);
  });
});
