import { errorMessage } from '../errors/engram-error';
import type { BackoffOptions } from '../reliability/retry-policy';
import { startSweepTimer, type SweepingStage, type SweepTimer } from '../reliability/sweep-timer';
import type { StageProcessor, StreamPlatform, StreamTopic } from './stream-platform';
import type { ExactlyOnceStage, TopicCodec } from './stream-stage';

/**
 * A stateful service's stream topology as data: which topics it creates, which topic feeds which
 * stage with which codec, which topic's assignment tells a stage what it owns, and its timers.
 * Written once per service; `runTopology` runs it on either platform (the mode chooses the
 * StreamPlatform adapter, nothing else).
 */
export interface ServiceTopology {
  service: string;
  groupId: string;
  topics: {
    /**
     * Inputs, possibly created by another service first: created with the requested partition
     * count if missing; they must share one count (co-partitioned by session).
     */
    inputs: readonly StreamTopic[];
    /** The service's own topics (outputs, changelogs): created with the inputs' count. */
    own: readonly StreamTopic[];
  };
  /** The codec names the topic it reads; one stage per topic. */
  bindings: readonly StageBinding[];
  /** Owned-partition notifications: `assign` gets this member's partitions of `topic`. */
  assignments: readonly AssignmentBinding[];
  /** Timer work (idle sessions, waiting events), each sweep in a transaction of its own. */
  timers: readonly TimerBinding[];
  /** Topics other services write that this group consumes: `replay --wait` waits on them. */
  waitOn: readonly string[];
  /** The service's own repartition topics, consumed by the same group after the inputs. */
  internal: readonly string[];
}

export interface StageBinding<E = unknown> {
  codec: TopicCodec<E>;
  stage: ExactlyOnceStage<E>;
}

/** A binding whose stage is typed by its codec (an inline stage then sees the topic's events). */
export function bindStage<E>(codec: TopicCodec<E>, stage: ExactlyOnceStage<E>): StageBinding {
  return { codec, stage };
}

export interface AssignmentBinding {
  topic: string;
  assign: (partitions: number[]) => void;
}

export interface TimerBinding {
  name: string;
  stage: SweepingStage;
  intervalMs: number;
}

/** How long a failing batch or timer backs off when the service's configuration says nothing. */
export const DEFAULT_STAGE_RETRY: BackoffOptions = { initialMs: 200, maxMs: 30_000 };

/** What a service's options say about running its topology (each service's options extend it). */
export interface TopologyRunSettings {
  /** Partitions of the topics it creates when the inputs do not exist yet (default 3). */
  partitions?: number;
  /** Distributed mode: this instance's stable id (its transactional id's suffix). */
  instanceId?: string;
  /** Backoff of failing batches and timers (default DEFAULT_STAGE_RETRY). */
  retry?: BackoffOptions;
}

export interface RunningTopology {
  processor: StageProcessor;
  groupId: string;
  /** The partition count of the service's topics. */
  partitions: number;
  inputs: string[];
  internal: string[];
  /** Stops the timers (waiting for a sweep in flight), then the processor. */
  stop(): Promise<void>;
}

/** Creates the topology's topics, subscribes its stages, starts the processor and the timers. */
export async function runTopology(
  platform: StreamPlatform,
  topology: ServiceTopology,
  settings: TopologyRunSettings,
  /** Where timer failures are reported (they are retried at the next tick). */
  warn: (line: string) => void,
): Promise<RunningTopology> {
  await platform.ensureTopics(topology.topics.inputs, settings.partitions ?? 3);
  const partitions = await platform.partitionCount(topology.topics.inputs.map((t) => t.topic));
  await platform.ensureTopics(topology.topics.own, partitions);
  const processor = await platform.createProcessor({
    groupId: topology.groupId,
    service: topology.service,
    retry: settings.retry ?? DEFAULT_STAGE_RETRY,
    ...(settings.instanceId !== undefined && { instanceId: settings.instanceId }),
    onAssignment: (assignment) => {
      for (const binding of topology.assignments) binding.assign(assignment[binding.topic] ?? []);
    },
  });
  for (const { codec, stage } of topology.bindings) processor.subscribe(codec, stage);
  await processor.start();
  const timers: SweepTimer[] = topology.timers.map(({ name, stage, intervalMs }) =>
    startSweepTimer(processor, stage, intervalMs, (error) =>
      warn(`${name} sweep failed, will retry: ${errorMessage(error)}`),
    ),
  );
  return {
    processor,
    groupId: topology.groupId,
    partitions,
    inputs: [...topology.waitOn],
    internal: [...topology.internal],
    async stop() {
      await Promise.all(timers.map((timer) => timer.stop()));
      await processor.stop();
    },
  };
}
