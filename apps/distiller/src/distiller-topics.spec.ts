// The distiller's topic layout, on the embedded platform (the Kafka platform runs the same
// function: test/integration/distiller.test.ts creates every run's topics with it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MisconfigurationError } from '@engram/core';
import { EmbeddedStreamPlatform, SqliteEventLog } from '@engram/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureDistillerTopics, prefixedDistillerTopics } from './distiller-topics';
import { DEFAULT_DISTILLER_TOPICS } from './distiller.stage';

const TOPICS = DEFAULT_DISTILLER_TOPICS;

describe('the distiller topics', () => {
  let dir: string;
  let log: SqliteEventLog;
  let platform: EmbeddedStreamPlatform;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-distiller-topics-'));
    log = SqliteEventLog.open({ dataDir: dir });
    platform = new EmbeddedStreamPlatform(log);
  });

  afterEach(() => {
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = (topic: string) => log.topic(topic)?.partitions;

  it('should prefix every topic name', () => {
    const prefixed = prefixedDistillerTopics('it.');
    expect(Object.keys(prefixed)).toEqual(Object.keys(TOPICS));
    expect(prefixed.memoryMergeChangelog).toBe('it.distiller.memory-merge.v1');
  });

  it("should create the own topics with the inputs' count and the join's with the episodes'", async () => {
    log.ensureTopic(TOPICS.prompts, 4);
    log.ensureTopic(TOPICS.episodes, 2, { compacted: true });
    expect(await ensureDistillerTopics(platform, TOPICS, 3)).toBe(4);
    expect(count(TOPICS.boundaries)).toBe(4);
    expect(count(TOPICS.memoryCandidates)).toBe(4);
    expect(count(TOPICS.memoryMergeChangelog)).toBe(4);
    expect(count(TOPICS.reflectorChangelog)).toBe(4);
    expect(count(TOPICS.narratives)).toBe(2);
    expect(count(TOPICS.summaryChangelog)).toBe(2);
    // Changelogs have no dead-letter topic; inputs and outputs do.
    expect(log.topic(`${TOPICS.changelog}.dlq`)).toBeUndefined();
    expect(log.topic(`${TOPICS.narratives}.dlq`)).toBeDefined();
    // Idempotent.
    expect(await ensureDistillerTopics(platform, TOPICS, 3)).toBe(4);
  });

  it('should refuse inputs that are not co-partitioned, and a changelog partitioned unlike its topic', async () => {
    log.ensureTopic(TOPICS.lifecycle, 2);
    await expect(ensureDistillerTopics(platform, TOPICS, 3)).rejects.toThrow(MisconfigurationError);

    const other = prefixedDistillerTopics('other.');
    log.ensureTopic(other.reflectorChangelog, 5, { compacted: true });
    await expect(ensureDistillerTopics(platform, other, 3)).rejects.toThrow(
      new RegExp(`${other.reflector}: 3, ${other.reflectorChangelog}: 5`),
    );
  });
});
