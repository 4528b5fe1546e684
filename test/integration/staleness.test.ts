import { OnnxMiniLmEmbedder, type Embedder } from '@engram/ai';
import { parseConfig } from '@engram/config';
import type { LifecycleEvent, Memory, Typed } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG, observerSettings, type RankedMemory } from '@engram/core';
import { createElasticsearchClient, retrievalIndexNames } from '@engram/elasticsearch';
import { codecOnTopic, contractCodec, KafkaEventLog } from '@engram/kafka';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  distributedHookPublisher,
  hookMemoryOn,
  hookRunFor,
  runHook,
} from '../../apps/engram/src/commands/hook.command';
import {
  ensureObserverTopics,
  observerCodecs,
  prefixedObserverTopics,
  type RunningObserver,
} from '../../apps/observer/src/observer.topology';
import { createRecallStack } from '../../apps/retrieval/src/retrieval-backend';
import { elasticsearchBackend } from '../../apps/retrieval/src/elasticsearch-retrieval';
import type { RecallStack } from '../../apps/retrieval/src/recall-stack';
import { prefixedRetrievalTopics } from '../../apps/retrieval/src/retrieval-topics';
import type { RunningRetrieval } from '../../apps/retrieval/src/retrieval.topology';
import { startTestIndexer } from './support/retrieval-indexer';
import { fileGotcha } from '@engram/app-retrieval/testing';
import { testKafka, testRegistry, withTestPlatform } from './support/kafka-fixtures';
import { startTestObserver } from './support/observer-service';
import { eventually, uniqueName } from './support/unique';

// Issue #20, staleness from the code itself, distributed (the servers): a CommitMade on the
// lifecycle topic reaches the observer (exactly-once processor on Kafka, graph on Neo4j), whose
// project stage looks the memories about the renamed and deleted files up in the compacted memory
// topic (KafkaEventLog + CompactedView) and writes their next versions under the same ids; the
// retrieval indexer puts those into Elasticsearch, where recall and InjectForFile read them. The
// embedded twin is apps/engram/src/staleness.embedded.spec.ts. Last, `engram hook --distributed`
// (its run, publisher and working-tree check; the recall stack in place of its gRPC client) finds
// the renamed file deleted from a real git work tree: its files-gone FileManifest reaches Kafka and
// the observer's sweep stales the memory (embedded twin: apps/engram/src/files-gone.embedded.spec.ts).

const PARTITIONS = 3;
const SESSION_FILE = 'src/auth/session.ts';
const SESSIONS_FILE = 'src/auth/sessions.ts';
const LEGACY_FILE = 'src/auth/legacy-cookie.ts';
const T0 = Date.UTC(2026, 0, 5, 9);
const STALE_PREFIX = '[STALE — file no longer exists] ';

interface Scope {
  tenantId: string;
  projectId: string;
}

const gotcha = (scope: Scope, memoryId: string, content: string, file: string): Memory =>
  fileGotcha(scope, memoryId, content, file, T0);

describe('staleness from commits, distributed (Kafka, Schema Registry, Neo4j, Elasticsearch)', () => {
  const infra = inject('infra');
  const run = uniqueName('it-stale');
  const prefix = `${run}.`;
  const scope: Scope = { tenantId: 'acme', projectId: uniqueName('acme/staleness') };
  const observerTopics = prefixedObserverTopics(prefix);
  const retrievalTopics = prefixedRetrievalTopics(prefix);
  const indices = retrievalIndexNames(prefix);
  const memoriesCodec = codecOnTopic(contractCodec('memory.memories.v1'), observerTopics.memories);
  const lifecycleCodec = observerCodecs(observerTopics).lifecycle;
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const log = new KafkaEventLog(testKafka(), testRegistry());

  const sessionMemory = gotcha(
    scope,
    `${run}-session`,
    'Session rotation must hold the refresh mutex or two tabs log each other out',
    SESSION_FILE,
  );
  const legacyMemory = gotcha(
    scope,
    `${run}-legacy`,
    'The legacy cookie parser drops quoted values with semicolons',
    LEGACY_FILE,
  );
  const commit: Typed<'CommitMade'> = {
    type: 'CommitMade',
    eventId: `${run}-commit-1`,
    ...scope,
    sessionId: `${run}-session-1`,
    agentId: 'claude-code',
    userId: null,
    timestamp: T0 + 3_600_000,
    schemaVersion: 1,
    sha: 'f00dfeed',
    changedFiles: ['src/auth/index.ts'],
    renamedFiles: [{ from: SESSION_FILE, to: SESSIONS_FILE }],
    deletedFiles: [LEGACY_FILE],
    message: 'refactor: sessions module, drop the legacy cookie parser',
    branch: 'main',
  };

  let embedder: Embedder;
  let observer: RunningObserver | undefined;
  let indexer: RunningRetrieval | undefined;
  let stack: RecallStack | undefined;
  const timings: string[] = [];

  const injectFor = async (filePath: string) => {
    await es.indices.refresh({ index: indices.memories });
    const { memories } = await stack!.context.injectForFile({ ...scope, filePath });
    return memories.map((m) => m.memory.memoryId);
  };
  const recall = async (query: string): Promise<RankedMemory[]> => {
    await es.indices.refresh({ index: indices.memories });
    const { results } = await stack!.service.recall({ ...scope, query, tier: 'memories', k: 5 });
    return results.flatMap((hit) => (hit.tier === 'memories' ? [hit.memory] : []));
  };
  /** Every record of the memory topic, in offset order per partition (read_committed). */
  const memoryRecords = async (): Promise<Memory[]> => {
    const ends = await log.endOffsets(memoriesCodec.topic);
    const records: Memory[] = [];
    for (const [partition, end] of ends.entries()) {
      if (end === 0) continue;
      const page = await log.read(memoriesCodec, partition, 0, 1_000);
      records.push(...page.map(({ event: { type: _type, ...memory } }) => memory));
    }
    return records;
  };
  /** The injected ids once the indexer has caught up with `expected`. */
  const injectedEventually = (filePath: string, expected: string[]) =>
    eventually(
      async () => {
        const ids = await injectFor(filePath);
        return JSON.stringify(ids) === JSON.stringify(expected) ? ids : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );

  beforeAll(async () => {
    const began = performance.now();
    const [loaded] = await Promise.all([
      OnnxMiniLmEmbedder.load(),
      log.connect(),
      withTestPlatform((platform) => ensureObserverTopics(platform, observerTopics, PARTITIONS)),
    ]);
    embedder = loaded;
    // Two memories, as the observer or distiller would have written them.
    await log.publish(memoriesCodec, [
      { type: 'Memory', ...sessionMemory },
      { type: 'Memory', ...legacyMemory },
    ]);
    [observer, indexer] = await Promise.all([
      startTestObserver({
        settings: observerSettings(),
        topics: observerTopics,
        groupId: `${prefix}observer`,
        partitions: PARTITIONS,
        retry: { initialMs: 100, maxMs: 1_000 },
        sweepIntervalMs: 200,
        graphRetryWithinMs: 500,
      }),
      startTestIndexer({
        embedder,
        topics: retrievalTopics,
        indexPrefix: prefix,
        groupId: `${prefix}indexer`,
        partitions: PARTITIONS,
        retry: { initialMs: 100, maxMs: 1_000 },
        idleMerge: false,
      }),
    ]);
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: elasticsearchBackend(es, indices),
      embedder,
    });
    await injectedEventually(LEGACY_FILE, [legacyMemory.memoryId]);
    await injectedEventually(SESSION_FILE, [sessionMemory.memoryId]);
    timings.push(`setup ${((performance.now() - began) / 1000).toFixed(1)} s`);
  }, 120_000);

  afterAll(async () => {
    console.log(`[staleness] ${timings.join(', ')}`);
    await stack?.access.close();
    await indexer?.stop();
    await observer?.stop();
    await log.disconnect();
    for (const index of Object.values(indices)) {
      await es.indices.delete({ index, ignore_unavailable: true });
      await es.indices.deleteIndexTemplate({ name: index }).catch(() => undefined);
    }
    await es.close();
  });

  it('should inject both memories for their files before the commit', async () => {
    expect(await injectFor(SESSION_FILE)).toEqual([sessionMemory.memoryId]);
    expect(await injectFor(LEGACY_FILE)).toEqual([legacyMemory.memoryId]);
    expect(await injectFor(SESSIONS_FILE)).toEqual([]);
    const [found] = await recall('session rotation refresh mutex');
    expect(found.memory).toMatchObject({
      memoryId: sessionMemory.memoryId,
      relatedFiles: [SESSION_FILE],
    });
    expect(found.stale).toBe(false);
  });

  it('should move a renamed file memory to the new path and stale a deleted file memory', async () => {
    const began = performance.now();
    await log.publish(lifecycleCodec, [commit as LifecycleEvent]);
    await injectedEventually(SESSIONS_FILE, [sessionMemory.memoryId]);
    await injectedEventually(LEGACY_FILE, []);
    timings.push(`commit → Elasticsearch ${((performance.now() - began) / 1000).toFixed(1)} s`);

    // Renamed: injected for the new path, not for the old one; recall finds it with the new path.
    expect(await injectFor(SESSION_FILE)).toEqual([]);
    const [moved] = await recall('session rotation refresh mutex');
    expect(moved.memory).toMatchObject({
      memoryId: sessionMemory.memoryId,
      relatedFiles: [SESSIONS_FILE],
      staleAt: null,
      tags: ['observer', `renamed-from:${SESSION_FILE}`],
    });
    expect(moved.stale).toBe(false);
    expect(moved.content).toBe(sessionMemory.content);

    // Deleted: never injected; an explicit recall shows it penalised, with the stale prefix.
    const stale = (await recall('legacy cookie parser quoted semicolons')).find(
      (m) => m.memory.memoryId === legacyMemory.memoryId,
    );
    expect(stale).toBeDefined();
    expect(stale!.memory.staleAt).toBe(commit.timestamp);
    expect(stale!.stale).toBe(true);
    expect(stale!.content).toBe(`${STALE_PREFIX}${legacyMemory.content}`);
    expect(stale!.confidence).toBeCloseTo(legacyMemory.confidence * 0.5, 10);
    expect(stale!.score.stalePenalty).toBe(0.5);

    // BuildContext leaves the stale memory out.
    const context = await stack!.context.buildContext({
      ...scope,
      sessionId: `${run}-session-2`,
      query: 'legacy cookie parser quoted semicolons session rotation',
    });
    expect(context.rendered).not.toContain(legacyMemory.content);

    // On the memory topic: one new version of each, same ids, written by the observer.
    const records = await memoryRecords();
    const versionsOf = (id: string) => records.filter((m) => m.memoryId === id);
    expect(records).toHaveLength(4);
    const [, movedVersion] = versionsOf(sessionMemory.memoryId);
    expect(movedVersion).toMatchObject({
      relatedFiles: [SESSIONS_FILE],
      tags: ['observer', `renamed-from:${SESSION_FILE}`],
      staleAt: null,
      content: sessionMemory.content,
    });
    expect(movedVersion.sourceEventIds).toContain(commit.eventId);
    const [, staleVersion] = versionsOf(legacyMemory.memoryId);
    expect(staleVersion).toMatchObject({ relatedFiles: [LEGACY_FILE], staleAt: commit.timestamp });
    expect(observer!.promotion.counters.revisedForFiles).toBe(2);
    expect(observer!.processor.counters.deadLettered).toBe(0);
  });

  it('should write nothing new when the same commit is published again', async () => {
    const ends = await log.endOffsets(memoriesCodec.topic);
    const works = observer!.promotion.counters.committedWorks;
    await log.publish(lifecycleCodec, [{ ...commit, eventId: `${run}-commit-1-again` }]);
    // The session stage applied the commit and the project stage committed every work it sent
    // (the commit's file changes): whatever the lookup wrote is on the topic by now.
    await eventually(
      () => {
        const { stage, promotion, episodeFeed } = observer!;
        return stage.counters.lifecycleEvents >= 2 &&
          stage.pendingLifecycle === 0 &&
          promotion.counters.committedWorks > works &&
          promotion.counters.committedWorks ===
            stage.counters.projectWorks + episodeFeed.counters.projectWorks
          ? true
          : undefined;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        state: () => ({ stage: observer!.stage.counters, promotion: observer!.promotion.counters }),
      },
    );
    expect(await log.endOffsets(memoriesCodec.topic)).toEqual(ends);
    expect(observer!.promotion.counters.revisedForFiles).toBe(2);
    expect(await injectFor(SESSIONS_FILE)).toEqual([sessionMemory.memoryId]);
    expect(await injectFor(LEGACY_FILE)).toEqual([]);
  });

  it('should stale the memory once a hook finds its file gone and sends a FileManifest to Kafka', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-it-files-gone-'));
    const repo = join(dir, 'api');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
        stdio: 'ignore',
      });
    try {
      for (const file of [SESSIONS_FILE, 'src/auth/index.ts']) {
        mkdirSync(dirname(join(repo, file)), { recursive: true });
        writeFileSync(join(repo, file), 'export {};\n');
      }
      git('init', '-q');
      git('add', '.');
      git('commit', '-q', '-m', 'init');
      rmSync(join(repo, SESSIONS_FILE));
      const config = parseConfig({
        ENGRAM_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
        ENGRAM_SCHEMA_REGISTRY_URL: infra.registryUrl,
        ENGRAM_TOPIC_PREFIX: prefix,
      });
      const sessionId = `${run}-session-hook`;
      const began = performance.now();
      const options = { dataDir: join(dir, 'data'), context: true, budgetMs: 10_000 };
      const outcome = await runHook(
        hookRunFor(
          { ...options, contextBudgetMs: 20_000, tenant: scope.tenantId, project: scope.projectId },
          JSON.stringify({
            session_id: sessionId,
            transcript_path: `/home/dev/.claude/projects/api/${sessionId}.jsonl`,
            cwd: repo,
            hook_event_name: 'PreToolUse',
            tool_name: 'Read',
            tool_use_id: `${run}-toolu-1`,
            tool_input: { file_path: join(repo, SESSIONS_FILE) },
          }),
          Date.now(),
          {
            openPublisher: () => distributedHookPublisher(config),
            openMemory: () =>
              Promise.resolve(
                hookMemoryOn({
                  buildContext: (input) => stack!.context.buildContext(input),
                  injectForFile: (input) => stack!.context.injectForFile(input),
                  close: () => Promise.resolve(),
                }),
              ),
          },
        ),
      );
      // Hidden from the agent, and nothing spooled: the manifest went to Kafka.
      expect(outcome.stdout).toBe(null);
      expect(outcome).toMatchObject({ spooled: 0, messages: [] });
      const lifecycle: LifecycleEvent[] = [];
      for (const [partition, end] of (await log.endOffsets(lifecycleCodec.topic)).entries()) {
        if (end === 0) continue;
        const page = await log.read(lifecycleCodec, partition, 0, 1_000);
        lifecycle.push(...page.map(({ event }) => event));
      }
      const manifests = lifecycle.filter(
        (event) => event.type === 'FileManifest' && event.sessionId === sessionId,
      );
      expect(manifests).toHaveLength(1);
      const [manifest] = manifests as Typed<'FileManifest'>[];
      expect(manifest).toMatchObject({ ...scope, files: ['src/auth/index.ts'] });

      await injectedEventually(SESSIONS_FILE, []);
      timings.push(
        `files-gone hook → Elasticsearch ${((performance.now() - began) / 1000).toFixed(1)} s`,
      );
      const stale = (await recall('session rotation refresh mutex')).find(
        (m) => m.memory.memoryId === sessionMemory.memoryId,
      );
      expect(stale!.memory.staleAt).toBe(manifest.timestamp);
      expect(stale!.stale).toBe(true);
      expect(stale!.content).toBe(`${STALE_PREFIX}${sessionMemory.content}`);
      expect(observer!.stage.counters.manifestsSwept).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
