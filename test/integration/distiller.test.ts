import { testDistillerSettings } from '../../apps/distiller/src/testing/test-settings';
import type { Episode, Memory } from '@engram/contracts';
import { EVENT_FIXTURES } from '../../libs/contracts/src/testing/event-fixtures';
import { memoryIdOf, segmenterSettings } from '@engram/core';
import { deadLetterTopic, EventPublisher, reliableProducerConfig } from '@engram/kafka';
import type { Kafka } from 'kafkajs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  distillerCodecs,
  prefixedDistillerTopics,
} from '../../apps/distiller/src/distiller-topics';
import {
  DEFAULT_DISTILLER_GROUP,
  type DistillerOptions,
  type RunningDistiller,
} from '../../apps/distiller/src/distiller.topology';
import type { DistillerTopics } from '../../apps/distiller/src/distiller.stage';
import {
  compactedSession,
  debuggingSession,
  shortSession,
  type RecordedSession,
} from '../../apps/distiller/src/testing/distiller-events';
import { startSegmenter } from '../../apps/segmenter/src/segmenter.topology';
import {
  startFakeChatServer,
  type FakeChatServer,
} from '../../libs/ai/src/testing/fake-chat-server';
import {
  readAllCommitted,
  testKafka,
  testPlatform,
  testRegistry,
  topicSize,
} from './support/kafka-fixtures';
import { ensureDistillerTopicsOnKafka, startDistillerOnKafka } from './support/distiller-on-kafka';
import { eventually, uniqueName } from './support/unique';
import { freePort } from '../support/free-port';
import { serviceProcess } from './support/service-process';
import { FAST_TAKEOVER_ENV, killAfterCommits } from './support/kill-rounds';

const ROOT = join(__dirname, '..', '..');
const PARTITIONS = 3;
const T0 = Date.UTC(2026, 1, 16, 9, 0);
const HOUR = 3_600_000;
/** SIGKILLs of the crash test. */
const KILLS = 5;
const MODEL = 'llama3.1:8b';
/** Distillations of one recordedDay copy. */
const DISTILLATIONS = 8;

/** A recorded day of one project: debugging with corrections, a compacted session, short ones. */
function recordedDay(run: string, copies = 1): RecordedSession[] {
  const scope = { tenantId: 'acme', projectId: `acme/api-${run}` };
  const sessions: RecordedSession[] = [];
  for (let i = 0; i < copies; i += 1) {
    const at = T0 + i * 3 * HOUR;
    sessions.push(
      debuggingSession(`${run}-debug-${i}`, at, scope),
      compactedSession(`${run}-compact-${i}`, at + HOUR, scope),
      shortSession(`${run}-short-${i}`, at + 2 * HOUR, scope),
    );
  }
  return sessions;
}

type Part = 'prompts' | 'toolCalls' | 'lifecycle' | 'boundaries';

/**
 * Publishes the parts of the sessions; with `inTransaction`, in one transaction, as the segmenter
 * writes boundaries (each transaction ends with a commit marker on every partition it wrote).
 */
async function publish(
  kafka: Kafka,
  topics: DistillerTopics,
  sessions: readonly RecordedSession[],
  parts: readonly Part[] = ['prompts', 'toolCalls', 'boundaries', 'lifecycle'],
  { inTransaction = false } = {},
): Promise<number> {
  const publisher = new EventPublisher(kafka, testRegistry());
  const producer = inTransaction
    ? kafka.producer(reliableProducerConfig({ transactionalId: uniqueName('txn') }))
    : null;
  const codecs = distillerCodecs(topics);
  await Promise.all([publisher.connect(), producer?.connect()]);
  let count = 0;
  try {
    const transaction = await producer?.transaction();
    for (const part of parts) {
      const events = sessions.flatMap((s) => s[part] as unknown[]);
      await publisher.publish(codecs[part] as never, events as never[], transaction);
      count += events.length;
    }
    await transaction?.commit();
  } finally {
    await Promise.all([publisher.disconnect(), producer?.disconnect()]);
  }
  return count;
}

async function readMemories(topics: DistillerTopics, atLeast: number): Promise<Memory[]> {
  const registry = testRegistry();
  const messages = await readAllCommitted(testKafka(), topics.memories, atLeast);
  return Promise.all(messages.map((m) => registry.decode<Memory>(m.value)));
}

function options(prefix: string, overrides: Partial<Omit<DistillerOptions, 'platform'>> = {}) {
  return {
    topics: prefixedDistillerTopics(prefix),
    groupId: `${prefix}distiller`,
    partitions: PARTITIONS,
    sweepIntervalMs: 300,
    retry: { initialMs: 100, maxMs: 1_000 },
    settings: testDistillerSettings(),
    ...overrides,
  };
}

/** Every published input event consumed and committed, and no trigger waiting. */
async function settled(runtime: RunningDistiller, events: number, distilled = 0): Promise<void> {
  const { processor, stage } = runtime;
  await eventually(
    () =>
      stage.counters.events >= events &&
      stage.pendingTriggers === 0 &&
      stage.counters.distilled >= distilled &&
      runtime.merge.counters.candidates >= stage.counters.candidates
        ? true
        : undefined,
    { timeoutMs: 90_000, intervalMs: 100 },
  ).catch((error: unknown) => {
    const state = { ...stage.counters, processed: processor.counters.processed };
    console.log(`[distiller] not settled: ${JSON.stringify(state)}`);
    throw error;
  });
}

/** The latest version of every episode on the episodes topic (compacted: the last one wins). */
async function latestEpisodes(topics: DistillerTopics): Promise<Map<string, Episode>> {
  const registry = testRegistry();
  const messages = await readAllCommitted(testKafka(), topics.episodes, 1, 1_000);
  const byId = new Map<string, Episode>();
  for (const message of messages) {
    const episode = await registry.decode<Episode>(message.value);
    byId.set(episode.episodeId, episode);
  }
  return byId;
}

const recordIds = (memories: readonly Memory[]) => memories.map((m) => m.eventId).sort();

/**
 * The final version of each memory, in topic order (one key, one partition). Runs whose inputs
 * interleave differently write different intermediate versions, but every version of a fact is
 * joined per memory id (MemoryMergeStage, issue #19) and the joined memory's event id is derived
 * from its state: one final version per memory id, whatever the timing.
 */
const finalVersions = (memories: readonly Memory[]) =>
  [...new Map(memories.map((m) => [m.memoryId, m.eventId]))].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );

/** Records a runtime wrote to the memory topic: the work states and the merge's joined memories. */
const memoryRecords = ({ stage, merge }: RunningDistiller) =>
  stage.counters.memories - stage.counters.candidates + merge.counters.written;

/** At least one record per memory: what another run of the same input writes at the least. */
const memoryCount = (memories: readonly Memory[]) => new Set(memories.map((m) => m.memoryId)).size;

/** Reads the topic until its final versions are the reference's (or the time is up). */
async function expectFinalVersions(topics: DistillerTopics, reference: readonly Memory[]) {
  let memories: Memory[] = [];
  await eventually(
    async () => {
      memories = await readMemories(topics, memoryCount(reference));
      const same =
        JSON.stringify(finalVersions(memories)) === JSON.stringify(finalVersions(reference));
      return same ? true : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  ).catch(() => undefined);
  expect(finalVersions(memories)).toEqual(finalVersions(reference));
  // Exactly once: no record written twice.
  expect(new Set(recordIds(memories)).size).toBe(memories.length);
  return memories;
}

/** What every distilled memory must satisfy, whatever distilled it. */
function expectProvenance(memories: readonly Memory[], sessions: readonly RecordedSession[]) {
  const bySession = new Map(sessions.map((s) => [s.sessionId, s]));
  for (const memory of memories) {
    const session = bySession.get(memory.sessionId)!;
    expect(memory.source).toBe('distilled');
    // A fact learnt in several sessions names them all; it was first learnt in memory.sessionId.
    expect(memory.provenanceSessionIds).toContain(memory.sessionId);
    expect(memory.provenanceSessionIds).toEqual([...memory.provenanceSessionIds].sort());
    const provenance = memory.provenanceSessionIds.map((id) => bySession.get(id)!);
    expect(memory.sourceEventIds.length).toBeGreaterThan(0);
    const sourceEventIds = new Set(provenance.flatMap((s) => [...s.sourceEventIds]));
    for (const id of memory.sourceEventIds) expect(sourceEventIds.has(id)).toBe(true);
    // No invented timestamp: each is the time of one of the sessions' events.
    expect(session.eventTimes).toContain(memory.createdAt);
    expect(provenance.flatMap((s) => [...s.eventTimes])).toContain(memory.timestamp);
    expect(memory.timestamp).toBeGreaterThanOrEqual(memory.createdAt);
    if (memory.memoryType !== 'work_state') {
      // Deterministic ids: uuid v5 of tenant, project, type and normalised content.
      expect(memory.memoryId).toBe(
        memoryIdOf(memory.tenantId, memory.projectId, memory.memoryType, memory.content),
      );
    }
  }
}

describe('distiller service on real Kafka', () => {
  const run = uniqueName('dist').replace(/[^a-z0-9]/g, '');
  const sessions = recordedDay(run);
  const prefix = `${uniqueName('it-dist')}.`;
  const topics = prefixedDistillerTopics(prefix);
  let events = 0;
  let reference: Memory[] = [];
  let distilled = 0;

  beforeAll(async () => {
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(topics, PARTITIONS);
    events = await publish(kafka, topics, sessions);
  });

  it('should distil a recorded day into prioritised, provenanced memories on memory.memories.v1', async () => {
    const started = Date.now();
    const runtime = await startDistillerOnKafka(options(prefix));
    try {
      await settled(runtime, events);
      const seconds = (Date.now() - started) / 1000;
      distilled = runtime.stage.counters.distilled;
      console.log(
        `[distiller] ${sessions.length} sessions, ${events} events, ${distilled} distillations, ` +
          `${runtime.stage.counters.memories} memories in ${seconds.toFixed(1)} s (start included)`,
      );
      reference = await readMemories(topics, memoryRecords(runtime));
      expect(reference).toHaveLength(memoryRecords(runtime));
    } finally {
      await runtime.stop();
    }
    // debug: 3 episodes + end; compacted: 1 episode + compaction + end; short: 1 episode (its
    // end has one user message, too few).
    expect(distilled).toBe(DISTILLATIONS);
    expectProvenance(reference, sessions);
    const debug = reference.filter((m) => m.sessionId === sessions[0].sessionId);
    const line = (m: Memory) => `${m.memoryType} ${m.confidence} ${m.content}`;
    const text = debug.map(line).join('\n');
    // The correction, the "don't use X, use Y instead" rule, the failing test and its fix, the
    // command that worked after failing, the decision with its rationale, and what was done (🟡).
    expect(text).toMatch(/^gotcha 0\.85 Correction: don't touch the cache TTL/m);
    expect(text).toMatch(
      /^preference 0\.85 .*Don't use axios-retry, use our own retryWithBackoff/m,
    );
    expect(text).toMatch(/^error_pattern 0\.85 `npm test -- src\/auth\/refresh\.spec\.ts` failed/m);
    expect(text).toMatch(
      /^gotcha 0\.85 `npx vitest run src\/auth` worked where `npm run test:unit`/m,
    );
    expect(text).toMatch(/^decision 0\.85 .*fake timers instead of real sleeps .* because/m);
    expect(text).toMatch(/^pattern 0\.6 Added retries with backoff to the token refresh/m);
    const done = debug.find((m) => m.content.startsWith('Added retries with backoff'))!;
    expect(done.relatedFiles).toContain('src/auth/refresh.ts');
    expect(done.tags).toContain('priority:medium');
    // Which files were modified is bookkeeping, not a memory (issue #23).
    expect(text).not.toMatch(/Modified src\//);
    // The compaction left a work state for the agent to continue from.
    const compacted = reference.filter((m) => m.sessionId === sessions[1].sessionId);
    expect(compacted.some((m) => m.memoryType === 'work_state')).toBe(true);
    expect(compacted.map((m) => m.content).join('\n')).toMatch(/Never run migrations/);
    // Exactly once: one record per memory and distillation.
    expect(new Set(recordIds(reference)).size).toBe(reference.length);
  });

  it('should produce nothing new when the triggers are replayed from offset 0 by a new group', async () => {
    expect(reference.length).toBeGreaterThan(0);
    const runtime = await startDistillerOnKafka(options(prefix, { groupId: `${prefix}replay` }));
    try {
      await settled(runtime, events);
      expect(runtime.stage.counters.duplicates).toBe(distilled);
      expect(runtime.stage.counters.distilled).toBe(0);
    } finally {
      await runtime.stop();
    }
    const after = await readMemories(topics, reference.length);
    expect(recordIds(after)).toEqual(recordIds(reference));
  });

  it('should lose nothing when restarted in the middle of the stream', async () => {
    expect(reference.length).toBeGreaterThan(0);
    const restartPrefix = `${uniqueName('it-dist-restart')}.`;
    const restartTopics = prefixedDistillerTopics(restartPrefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(restartTopics, PARTITIONS);
    // First half: every prompt and tool call, and the episode closes; the ends come later.
    let published = await publish(kafka, restartTopics, sessions, [
      'prompts',
      'toolCalls',
      'boundaries',
    ]);
    const first = await startDistillerOnKafka(options(restartPrefix));
    try {
      await settled(first, published);
      expect(first.stage.openSessions).toBe(sessions.length);
    } finally {
      await first.stop();
    }
    published += await publish(kafka, restartTopics, sessions, ['lifecycle']);
    const second = await startDistillerOnKafka(options(restartPrefix));
    try {
      // The restarted instance consumes only the lifecycle events: the sessions come back from
      // the changelog, else their ends and compaction would distil nothing.
      await settled(second, published - first.stage.counters.events);
      await eventually(() => (second.stage.openSessions === 0 ? true : undefined));
    } finally {
      await second.stop();
    }
    await expectFinalVersions(restartTopics, reference);
  });

  it("should distil the sessions' ends when their boundaries were written in a transaction before", async () => {
    expect(reference.length).toBeGreaterThan(0);
    const txnPrefix = `${uniqueName('it-dist-txn')}.`;
    const txnTopics = prefixedDistillerTopics(txnPrefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(txnTopics, PARTITIONS);
    // As for a distiller that starts (or catches up) after the segmenter: the boundaries and the
    // commit markers after them are all on the log before the distiller reads a session's end,
    // which waits until the boundaries are consumed up to their end offset, past the marker.
    let published = await publish(kafka, txnTopics, sessions, ['prompts', 'toolCalls']);
    published += await publish(kafka, txnTopics, sessions, ['boundaries'], { inTransaction: true });
    published += await publish(kafka, txnTopics, sessions, ['lifecycle']);
    const runtime = await startDistillerOnKafka(options(txnPrefix));
    try {
      await settled(runtime, published, DISTILLATIONS);
      await eventually(() => (runtime.stage.openSessions === 0 ? true : undefined));
    } finally {
      await runtime.stop();
    }
    await expectFinalVersions(txnTopics, reference);
  });

  it('should dead-letter bad input and go on distilling', async () => {
    const badPrefix = `${uniqueName('it-dist-dlq')}.`;
    const badTopics = prefixedDistillerTopics(badPrefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(badTopics, PARTITIONS);
    const session = shortSession(`${run}-dlq`, T0, { tenantId: 'acme', projectId: 'acme/dlq' });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: badTopics.prompts,
      messages: [{ key: session.sessionId, value: Buffer.from('not avro at all') }],
    });
    await producer.disconnect();
    const published = await publish(kafka, badTopics, [session]);
    const runtime = await startDistillerOnKafka(options(badPrefix));
    try {
      await settled(runtime, published, 1);
      expect(runtime.processor.counters.deadLettered).toBe(1);
    } finally {
      await runtime.stop();
    }
    const [dead] = await readAllCommitted(kafka, deadLetterTopic(badTopics.prompts), 1, 500);
    expect(dead.value?.toString()).toBe('not avro at all');
  });

  it("should join an episode with its narrative after a restart between the two halves (the join's own changelog)", async () => {
    const joinPrefix = `${uniqueName('it-dist-join')}.`;
    const joinTopics = prefixedDistillerTopics(joinPrefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(joinTopics, PARTITIONS);
    const codecs = distillerCodecs(joinTopics);
    const episode = { ...EVENT_FIXTURES.Episode, summary: null };
    const publisher = new EventPublisher(kafka, testRegistry());
    await publisher.connect();
    try {
      const first = await startDistillerOnKafka(options(joinPrefix));
      try {
        await publisher.publish(codecs.episodes, [{ type: 'Episode', ...episode }]);
        // The episode's half waits in the join's changelog (before the fix it went to the
        // distiller's session changelog, and a restarted join restored nothing).
        await eventually(
          async () =>
            (await topicSize(kafka, joinTopics.summaryChangelog)) > 0 ? true : undefined,
          { timeoutMs: 30_000, intervalMs: 200 },
        );
      } finally {
        await first.stop();
      }
      expect(await topicSize(kafka, joinTopics.changelog)).toBe(0);
      const second = await startDistillerOnKafka(options(joinPrefix));
      try {
        const narrative = {
          eventId: '7d0e1b8a-2f4c-5a6b-9c8d-0e1f2a3b4c5d',
          tenantId: episode.tenantId,
          projectId: episode.projectId,
          sessionId: episode.sessionId,
          episodeId: episode.episodeId,
          summary: 'Worked on auth, token, refresh: serialised the refresh behind a mutex.',
          timestamp: episode.endedAt,
        };
        await publisher.publish(codecs.narratives, [narrative]);
        const annotated = await eventually(
          async () =>
            (await latestEpisodes(joinTopics)).get(episode.episodeId)?.summary ?? undefined,
          { timeoutMs: 30_000, intervalMs: 300 },
        );
        expect(annotated).toBe(narrative.summary);
      } finally {
        await second.stop();
      }
    } finally {
      await publisher.disconnect();
    }
  });

  it('should distil episodes the real segmenter closes', async () => {
    const segPrefix = `${uniqueName('it-dist-seg')}.`;
    const segTopics = prefixedDistillerTopics(segPrefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(segTopics, PARTITIONS);
    const segmenterPlatform = await testPlatform();
    const segmenter = await startSegmenter({
      platform: segmenterPlatform,
      settings: segmenterSettings(),
      topics: {
        prompts: segTopics.prompts,
        toolCalls: segTopics.toolCalls,
        lifecycle: segTopics.lifecycle,
        boundaries: segTopics.boundaries,
        episodes: `${segPrefix}memory.episodes.v1`,
        threadLinks: `${segPrefix}memory.thread-links.v1`,
        changelog: `${segPrefix}segmenter.state.v1`,
      },
      groupId: `${segPrefix}segmenter`,
      partitions: PARTITIONS,
      sweepIntervalMs: 500,
      retry: { initialMs: 100, maxMs: 1_000 },
    });
    // The segmenter's sweep may close an episode as idle before the session ends: then no final
    // close comes, and the state goes after the grace (short here).
    const distiller = await startDistillerOnKafka(
      options(segPrefix, {
        settings: testDistillerSettings({ retention: { endGraceMs: 3_000, idleMs: 24 * HOUR } }),
      }),
    );
    try {
      await publish(kafka, segTopics, sessions, ['prompts', 'toolCalls', 'lifecycle']);
      // Every session ends: the segmenter closes its last episode (`session_end`) and the
      // distiller drops the session once that close is distilled.
      await eventually(
        () =>
          distiller.stage.counters.triggers > 0 &&
          distiller.stage.pendingTriggers === 0 &&
          distiller.stage.openSessions === 0
            ? true
            : undefined,
        {
          timeoutMs: 90_000,
          intervalMs: 200,
          state: () => ({
            distiller: distiller.stage.counters,
            pendingTriggers: distiller.stage.pendingTriggers,
            openSessions: distiller.stage.openSessions,
            segmenterOpenSessions: segmenter.stage.openSessions,
          }),
        },
      );
      const { counters } = distiller.stage;
      console.log(`[distiller] with the segmenter: ${JSON.stringify(counters)}`);
      // Every close of the segmenter and every end found its session's events; only the short
      // session's end is skipped (one user message).
      expect(counters.skipped).toBe(1);
      const memories = await readMemories(segTopics, memoryRecords(distiller));
      expectProvenance(memories, sessions);
      const episodes = new Set(memories.map((m) => m.episodeId).filter((id) => id !== null));
      expect(episodes.size).toBeGreaterThan(0);
      expect(memories.map((m) => m.content).join('\n')).toMatch(/axios-retry/);
      // Narratives annotate the episodes: the last version of every episode has its summary.
      const latest = await eventually(
        async () => {
          const byId = await latestEpisodes(segTopics);
          const all = [...byId.values()];
          return all.length > 0 && all.every((e) => e.summary !== null) ? all : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(latest.every((e) => e.agentId === 'engram-distiller')).toBe(true);
      const debugEpisodes = latest.filter((e) => e.sessionId === sessions[0].sessionId);
      expect(debugEpisodes.map((e) => e.summary).join(' ')).toMatch(/src\/auth/);
      console.log(`[distiller] ${latest.length} episodes annotated, e.g. "${latest[0].summary}"`);
    } finally {
      await distiller.stop();
      await segmenter.stop();
      await segmenterPlatform.close();
    }
  });
});

/**
 * The answer of a model that read the transcript: a segment whose facts quote the developer's
 * statements at their times, one fact with a time the transcript does not have, the task.
 */
function modelAnswer(messages: { role: string; content: string }[]): string {
  const transcript = messages[messages.length - 1].content;
  const said = [...transcript.matchAll(/^\[(\d\d:\d\d)\] USER: (.*)$/gm)];
  const durable = /\b(don't|never|always|instead|decided|because)\b/i;
  const facts = said.map(([, time, text]) =>
    durable.test(text)
      ? `* 🔴 (${time}) Developer stated: "${text}"`
      : `* 🟡 (${time}) Asked: ${text}`,
  );
  return [
    '<observations>',
    '<segment>',
    `<narrative>The developer worked on: ${said[0]?.[2] ?? 'nothing'}.</narrative>`,
    '<facts>',
    ...facts,
    '* 🟡 (23:59) The developer prefers small pull requests',
    '</facts>',
    '</segment>',
    '</observations>',
    '<current-task>',
    `Primary: ${said[said.length - 1]?.[2] ?? 'none'}`,
    '</current-task>',
  ].join('\n');
}

describe('distiller service with an LLM (OpenAI-compatible wire format)', () => {
  let server: FakeChatServer;

  beforeAll(async () => {
    server = await startFakeChatServer({ model: MODEL, apiKey: 'sk-test', respond: modelAnswer });
  });
  afterAll(() => server.close());

  it('should distil through the LLM and wait out an outage without skipping a window', async () => {
    const run = uniqueName('llm').replace(/[^a-z0-9]/g, '');
    const sessions = recordedDay(run);
    const prefix = `${uniqueName('it-dist-llm')}.`;
    const topics = prefixedDistillerTopics(prefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(topics, PARTITIONS);
    // The endpoint is down for the first calls (503), then recovers.
    server.next(
      { kind: 'status', status: 503, body: { error: { message: 'overloaded' } } },
      { kind: 'status', status: 503, body: { error: { message: 'overloaded' } } },
      { kind: 'status', status: 503, body: { error: { message: 'overloaded' } } },
    );
    const events = await publish(kafka, topics, sessions);
    const runtime = await startDistillerOnKafka(
      options(prefix, {
        llm: { baseUrl: server.baseUrl, model: MODEL, apiKey: 'sk-test', maxAttempts: 1 },
        // The chat endpoint counts the window distiller's calls only: the LLM reflector's daily
        // reflection (due after 06:00 UTC once distillations stop arriving for quietMs, 60 s)
        // would add one when a loaded machine keeps this test running that long.
        reflector: { quietMs: 3_600_000 },
      }),
    );
    let memories: Memory[];
    try {
      await settled(runtime, events, DISTILLATIONS);
      memories = await readMemories(topics, memoryRecords(runtime));
      expect(runtime.stage.counters.distilled).toBe(DISTILLATIONS);
    } finally {
      await runtime.stop();
    }
    // Every window was distilled once, after the three refused calls.
    const calls = server.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(calls.length).toBe(DISTILLATIONS + 3);
    expect(runtime.distiller.method).toBe('llm');
    expectProvenance(memories, sessions);
    const text = memories.map((m) => m.content).join('\n');
    expect(text).toMatch(/Developer stated: "Don't use axios-retry, use our own retryWithBackoff/);
    // An LLM's facts wait for review; the invented 23:59 lost its time (checked above).
    expect(memories.filter((m) => m.memoryType !== 'work_state').every((m) => m.needsReview)).toBe(
      true,
    );
    const invented = memories.find((m) => m.content.includes('small pull requests'))!;
    expect(invented).toBeDefined();
    const work = memories.filter((m) => m.memoryType === 'work_state');
    expect(work.length).toBeGreaterThan(0);
    const body = calls[calls.length - 1].body as { messages: { role: string }[] };
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });
});

describe('distiller service under load and SIGKILL', () => {
  const run = uniqueName('load').replace(/[^a-z0-9]/g, '');
  const COPIES = 20;
  const sessions = recordedDay(run, COPIES);
  let reference: Memory[] = [];

  beforeAll(() => {
    // The killed run is a separate process running the compiled service.
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  });

  it('should distil a day of sixty sessions (throughput, measured)', async () => {
    const prefix = `${uniqueName('it-dist-load')}.`;
    const topics = prefixedDistillerTopics(prefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(topics, PARTITIONS);
    const events = await publish(kafka, topics, sessions);
    const runtime = await startDistillerOnKafka(options(prefix));
    const started = Date.now();
    try {
      await settled(runtime, events, DISTILLATIONS * COPIES);
      const seconds = (Date.now() - started) / 1000;
      const { counters } = runtime.stage;
      console.log(
        `[distiller] load: ${sessions.length} sessions, ${events} events, ${counters.distilled} ` +
          `distillations, ${counters.memories} memories in ${seconds.toFixed(1)} s after start: ` +
          `${(sessions.length / seconds).toFixed(1)} sessions/s, ` +
          `${(counters.distilled / seconds).toFixed(1)} distillations/s, ` +
          `${runtime.processor.counters.transactions} transactions`,
      );
      reference = await readMemories(topics, memoryRecords(runtime));
    } finally {
      await runtime.stop();
    }
    expect(reference).toHaveLength(new Set(recordIds(reference)).size);
    expectProvenance(reference, sessions);
  });

  it("should write exactly the uninterrupted run's memories when SIGKILLed mid-stream", async () => {
    expect(reference.length).toBeGreaterThan(0);
    const prefix = `${uniqueName('it-dist-kill')}.`;
    const topics = prefixedDistillerTopics(prefix);
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(topics, PARTITIONS);
    // The sessions in KILLS + 1 slices, one published before each round: every round has input
    // left, so every kill lands mid-stream (all at once, the first processes took most of it and
    // 3 or 4 kills happened). Each slice holds whole sessions.
    const slice = (i: number) =>
      sessions.slice(
        (i * sessions.length) / (KILLS + 1),
        ((i + 1) * sessions.length) / (KILLS + 1),
      );
    const service = serviceProcess('distiller', {
      ...FAST_TAKEOVER_ENV,
      ENGRAM_KAFKA_BROKERS: inject('infra').kafkaBrokers.join(','),
      ENGRAM_SCHEMA_REGISTRY_URL: inject('infra').registryUrl,
      ENGRAM_TOPIC_PREFIX: prefix,
      ENGRAM_SEGMENTER_PARTITIONS: String(PARTITIONS),
      ENGRAM_RETRY_INITIAL_MS: '100',
      ENGRAM_RETRY_MAX_MS: '2000',
      // Its own review API port: the default one may be taken by another Engram on this machine
      // (that made this test time out, the child having died at start-up unseen).
      ENGRAM_REVIEW_GRPC_URL: `127.0.0.1:${await freePort()}`,
    });
    const { start, alive, stop } = service;
    // Five kills, each 0–150 ms after a commit the killed process made: mid-stream.
    const kills: number[] = [];
    for (let round = 1; round <= KILLS; round += 1) {
      await publish(kafka, topics, slice(round - 1));
      const killedAt = await killAfterCommits(service, {
        groupId: `${prefix}${DEFAULT_DISTILLER_GROUP}`,
        inputs: [topics.prompts, topics.toolCalls, topics.boundaries, topics.lifecycle],
        kills: 1,
        onKill: (_, committed) =>
          console.log(
            `[distiller] round ${round}: SIGKILL after committed input offsets ${committed}`,
          ),
      });
      kills.push(...killedAt);
    }
    expect(kills.length).toBe(KILLS);
    await publish(kafka, topics, slice(KILLS));
    const last = start();
    try {
      // The successor waits out the killed member's session (8 s) before it is assigned.
      await eventually(
        async () => {
          alive(last);
          const records = await topicSize(kafka, topics.memories);
          return records >= memoryCount(reference) ? true : undefined;
        },
        { timeoutMs: 150_000, intervalMs: 500 },
      );
      console.log(`[distiller] ${kills.length} kills after commits (${kills.join(', ')})`);
      await expectFinalVersions(topics, reference);
    } finally {
      await stop(last, 'SIGTERM');
    }
  }, 240_000);
});
