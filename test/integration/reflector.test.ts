// The reflector and the review API on real Kafka + the schema registry (SPEC §8): distillations
// in → proposals on memory.proposals.v1; approval over gRPC → a user-verified memory on
// memory.memories.v1; a replay gives nothing new; a restart then seven days expire the rest.
import { testDistillerSettings } from '../../apps/distiller/src/testing/test-settings';
import type { Memory, Proposal } from '@engram/contracts';
import { MS_PER_DAY } from '@engram/core';
import { EventPublisher, type KafkaStreamPlatform } from '@engram/kafka';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  distillerCodecs,
  prefixedDistillerTopics,
} from '../../apps/distiller/src/distiller-topics';
import type { RunningDistiller } from '../../apps/distiller/src/distiller.topology';
import type { DistillerTopics } from '../../apps/distiller/src/distiller.stage';
import { ReviewRequestError } from '../../apps/distiller/src/review/review-desk';
import { ReviewGrpcClient } from '../../apps/distiller/src/review/review.grpc-client';
import {
  startDistillerReview,
  type ReviewServer,
} from '../../apps/distiller/src/review/review.server';
import {
  compactedSession,
  debuggingSession,
  type RecordedSession,
} from '../../apps/distiller/src/testing/distiller-events';
import { readAllCommitted, testKafka, testPlatform, testRegistry } from './support/kafka-fixtures';
import { ensureDistillerTopicsOnKafka, startDistillerOnKafka } from './support/distiller-on-kafka';
import { eventually, uniqueName } from './support/unique';
import { freePort } from '../support/free-port';
import { memoryMdReport } from '../../apps/engram/src/commands/memory-md.command';

const PARTITIONS = 3;
const T0 = Date.UTC(2026, 1, 16, 9, 0);
/** Before the daily hour of the sessions' day, then that evening. */
const MORNING = Date.UTC(2026, 1, 16, 5, 0);
const EVENING = Date.UTC(2026, 1, 16, 22, 0);

async function publish(kafka: Kafka, topics: DistillerTopics, sessions: RecordedSession[]) {
  const publisher = new EventPublisher(kafka, testRegistry());
  const codecs = distillerCodecs(topics);
  await publisher.connect();
  let count = 0;
  try {
    for (const part of ['prompts', 'toolCalls', 'boundaries', 'lifecycle'] as const) {
      const events = sessions.flatMap((s) => s[part] as unknown[]);
      await publisher.publish(codecs[part] as never, events as never[]);
      count += events.length;
    }
  } finally {
    await publisher.disconnect();
  }
  return count;
}

async function decoded<T>(topic: string, atLeast: number): Promise<T[]> {
  const registry = testRegistry();
  const messages = await readAllCommitted(testKafka(), topic, atLeast, 2_000);
  return Promise.all(messages.map((m) => registry.decode<T>(m.value)));
}

function latestById(records: readonly Proposal[]): Map<string, Proposal> {
  return new Map(records.map((r) => [r.proposalId, r]));
}

describe('reflector and review API on real Kafka', () => {
  const run = uniqueName('refl').replace(/[^a-z0-9]/g, '');
  const scope = { tenantId: `acme-${run}`, projectId: 'acme/api' };
  const sessions = [
    debuggingSession(`${run}-debug`, T0, scope),
    compactedSession(`${run}-migrate`, T0 + 3_600_000, scope),
  ];
  const prefix = `${uniqueName('it-refl')}.`;
  const topics = prefixedDistillerTopics(prefix);
  const codecs = distillerCodecs(topics);
  let now = MORNING;
  let events = 0;
  let runtime: RunningDistiller | undefined;
  let platform: KafkaStreamPlatform;
  let server: ReviewServer;
  let client: ReviewGrpcClient;
  let created: Proposal[] = [];

  const start = () =>
    startDistillerOnKafka({
      settings: testDistillerSettings(),
      topics,
      groupId: `${prefix}distiller`,
      partitions: PARTITIONS,
      sweepIntervalMs: 300,
      retry: { initialMs: 100, maxMs: 1_000 },
      reflector: { clock: () => now, scheduledHourUtc: 6 },
    });

  /** Every input consumed, every trigger distilled, every distillation at the reflector. */
  const settled = async (distiller: RunningDistiller, consumed: number) =>
    eventually(
      () =>
        distiller.stage.counters.events >= consumed &&
        distiller.stage.pendingTriggers === 0 &&
        distiller.reflector.counters.distillations + distiller.reflector.counters.duplicates >=
          distiller.stage.counters.distilled
          ? true
          : undefined,
      { timeoutMs: 90_000, intervalMs: 100 },
    );

  beforeAll(async () => {
    const kafka = testKafka();
    await ensureDistillerTopicsOnKafka(topics, PARTITIONS);
    events = await publish(kafka, topics, sessions);
    // The review API as the distiller's module serves it: on the platform's event log.
    platform = await testPlatform();
    const url = `127.0.0.1:${await freePort()}`;
    server = await startDistillerReview(platform, topics, {
      url,
      desk: { timeoutMs: 60_000, pollMs: 200, clock: () => now },
    });
    client = new ReviewGrpcClient(url);
  });

  afterAll(async () => {
    client?.close();
    await server?.stop();
    await platform?.close();
    await runtime?.stop();
  });

  it('should turn a day of distillations into proposals once, at the daily hour', async () => {
    runtime = await start();
    await settled(runtime, events);
    expect(runtime.reflector.counters.reflections).toBe(0);
    now = EVENING;
    await eventually(() => (runtime!.reflector.counters.proposals > 0 ? true : undefined), {
      timeoutMs: 30_000,
    });
    expect(runtime.reflector.counters.reflections).toBe(1);
    created = await decoded<Proposal>(topics.proposals, runtime.reflector.counters.proposals);
    expect(created.length).toBe(runtime.reflector.counters.proposals);
    for (const p of created) {
      expect(p.proposalId).toMatch(/^p-20260216-\d{3}$/);
      expect(p).toMatchObject({ ...scope, kind: 'reflection', status: 'pending' });
      expect(p.expiresAt).toBe(EVENING + 7 * MS_PER_DAY);
      expect(p.evidenceMemoryIds.length).toBeGreaterThan(0);
      expect(p.evidenceEventIds.length).toBeGreaterThan(0);
      for (const id of p.evidenceEventIds) {
        expect(sessions.flatMap((s) => [...s.sourceEventIds])).toContain(id);
      }
    }
    expect(new Set(created.map((p) => p.proposalId)).size).toBe(created.length);
    expect(created.map((p) => p.text).join('\n')).toMatch(/shared dev database/);
  });

  it('should approve over gRPC into a user-verified memory, and reject with a reason', async () => {
    expect(created.length).toBeGreaterThanOrEqual(2);
    const listed = await client.list({ scope: { tenantId: scope.tenantId, projectId: '' } });
    expect(listed.proposals.map((p) => p.proposalId).sort()).toEqual(
      created.map((p) => p.proposalId).sort(),
    );
    expect((await client.list({ scope: { tenantId: 'someone-else' } })).proposals).toEqual([]);
    const rule = created.find((p) => p.text.includes('shared dev database'))!;
    const other = created.find((p) => p !== rule)!;
    await expect(
      client.approve({ scope: { tenantId: 'someone-else' }, proposalId: rule.proposalId }),
    ).rejects.toMatchObject({ code: 'not-found' });

    const approved = await client.approve({
      scope: { tenantId: scope.tenantId },
      proposalId: rule.proposalId,
      reviewer: 'tim',
    });
    expect(approved).toMatchObject({
      changed: true,
      proposal: { status: 'approved', decidedBy: 'tim' },
    });
    const rejected = await client.reject({
      scope: { tenantId: scope.tenantId },
      proposalId: other.proposalId,
      reason: 'too specific',
    });
    expect(rejected.proposal.status).toBe('rejected');
    await expect(
      client.reject({ scope: { tenantId: scope.tenantId }, proposalId: rule.proposalId }),
    ).rejects.toBeInstanceOf(ReviewRequestError);

    const memories = await decoded<Memory>(topics.memories, 1);
    const promoted = memories.filter((m) => m.userVerified);
    expect(promoted).toHaveLength(1);
    expect(promoted[0]).toMatchObject({
      memoryId: approved.proposal.promotedMemoryId,
      content: rule.text,
      scope: 'global',
      source: 'distilled',
      userVerified: true,
      needsReview: false,
      tags: expect.arrayContaining([`proposal:${rule.proposalId}`]) as string[],
    });
    expect(promoted[0].sourceEventIds).toEqual(rule.evidenceEventIds);
    // `engram memory-md --distributed`: the approved line in its section of the project's file.
    const md = await memoryMdReport(await platform.eventLog(), codecs.memories, {
      project: scope.projectId,
      tenant: scope.tenantId,
    });
    expect(md.memories).toBe(1);
    expect(md.markdown.split('## Hard Rules')[1].split('## System Architecture')[0]).toContain(
      rule.text,
    );
  });

  it('should produce nothing new when the sessions are replayed, and expire the rest after a restart', async () => {
    expect(created.length).toBeGreaterThan(0);
    const before = (await decoded<Proposal>(topics.proposals, created.length + 2)).length;
    events += await publish(testKafka(), topics, sessions);
    await settled(runtime!, events);
    // A new day: a reflection would be allowed, but nothing is new. "Nothing happens" needs a
    // bounded wait: a few sweeps of the 300 ms timer.
    now = EVENING + MS_PER_DAY;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(runtime!.reflector.counters.reflections).toBe(1);
    expect(runtime!.stage.counters.duplicates).toBeGreaterThan(0);
    expect(await decoded<Proposal>(topics.proposals, before)).toHaveLength(before);

    await runtime!.stop();
    now = EVENING + 7 * MS_PER_DAY;
    runtime = await start();
    const expected = created.length - 2;
    await eventually(() => (runtime!.reflector.counters.expired >= expected ? true : undefined), {
      timeoutMs: 60_000,
    });
    const records = await decoded<Proposal>(topics.proposals, before + expected);
    const latest = latestById(records);
    expect([...latest.values()].filter((p) => p.status === 'pending')).toEqual([]);
    expect([...latest.values()].map((p) => p.status).sort()).toEqual(
      ['approved', 'rejected', ...Array<string>(expected).fill('expired')].sort(),
    );
    // One record per state change: each proposal created once and decided once.
    expect(records).toHaveLength(created.length * 2);
  });
});
