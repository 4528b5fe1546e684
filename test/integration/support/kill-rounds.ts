import type { ChildProcess } from 'node:child_process';
import { testKafka, topicSize } from './kafka-fixtures';
import type { ServiceProcess } from './service-process';

/**
 * Environment for a killed service: a SIGKILLed member's partitions move after this session
 * timeout instead of KafkaJS's 30 s, so several kills fit in one test.
 */
export const FAST_TAKEOVER_ENV = { ENGRAM_KAFKA_SESSION_TIMEOUT_MS: '8000' } as const;

export interface KillRoundsOptions {
  /** The service's consumer group. */
  groupId: string;
  /**
   * Input topics the test published (plain, not transactional, so a topic is fully consumed when
   * the group's committed offsets reach its size).
   */
  inputs: string[];
  /** Kills wanted; fewer happen when the input runs out first. */
  kills: number;
  /** How long a round waits for a commit (default 90 s). */
  commitWaitMs?: number;
  /** Called with the committed offset sum before each kill (a progress line). */
  onKill?: (round: number, committed: number) => void;
}

/**
 * Issue #19's crash harness on real Kafka: starts the service, waits until its group commits past
 * where the round began — a commit this process made — then SIGKILLs it 0–150 ms later, so kills
 * land between and inside transactions; repeats with a fresh process. Stops early when the input
 * is fully consumed. Returns the committed offset sums at the kills.
 */
export async function killAfterCommits(
  service: ServiceProcess,
  options: KillRoundsOptions,
): Promise<number[]> {
  const kills: number[] = [];
  for (let round = 0; round < options.kills; round += 1) {
    const before = await committedOffsets(options.groupId, options.inputs);
    if (before >= (await inputSize(options.inputs))) break;
    const child = service.start();
    const committed = await commitPast(service, child, options, before);
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 150)));
    options.onKill?.(round + 1, committed);
    kills.push(committed);
    await service.stop(child, 'SIGKILL');
  }
  return kills;
}

/** The sum of a group's committed offsets on `topics` (0 before any commit). */
export async function committedOffsets(groupId: string, topics: string[]): Promise<number> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchOffsets({ groupId, topics });
    return offsets
      .flatMap((topic) => topic.partitions)
      .reduce((sum, partition) => sum + Math.max(0, Number(partition.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

async function commitPast(
  service: ServiceProcess,
  child: ChildProcess,
  options: KillRoundsOptions,
  before: number,
): Promise<number> {
  const waitMs = options.commitWaitMs ?? 90_000;
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    service.alive(child);
    const committed = await committedOffsets(options.groupId, options.inputs);
    if (committed > before) return committed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await service.stop(child, 'SIGKILL');
  throw new Error(`${options.groupId} committed nothing past offset sum ${before} in ${waitMs} ms`);
}

async function inputSize(topics: string[]): Promise<number> {
  const sizes = await Promise.all(topics.map((topic) => topicSize(testKafka(), topic)));
  return sizes.reduce((sum, size) => sum + size, 0);
}
