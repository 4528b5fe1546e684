import type { BackoffOptions } from '../reliability/retry-policy';
import type { TransactionalProducer } from '../reliability/sweep-timer';
import type { EventLogPort } from './event-log.port';
import type { Delivered, DeliveredOrTombstone, ExactlyOnceStage, TopicCodec } from './stream-stage';

/**
 * The stream platform a service runs on: the Kafka cluster with its Schema Registry (distributed
 * mode) or the SQLite event log (embedded mode). A service's topology is written once against
 * this port; the mode only chooses which adapter provides it (libs/kafka's KafkaStreamPlatform,
 * libs/embedded's EmbeddedStreamPlatform). Both adapters pass one contract suite.
 */
export interface StreamPlatform {
  readonly mode: 'embedded' | 'distributed';
  /**
   * Creates the topics (and their `<topic>.dlq` unless `withDeadLetter: false`) if missing, with
   * `partitions` partitions. Idempotent: existing topics are left as they are.
   */
  ensureTopics(topics: readonly StreamTopic[], partitions: number): Promise<void>;
  /**
   * The partition count the topics share. They must exist; a MisconfigurationError names every
   * count when they differ (co-partitioned inputs are read by one group with one assignment).
   */
  partitionCount(topics: readonly string[]): Promise<number>;
  /** The latest value per key of a compacted topic's partitions (a stage's changelog restore). */
  readChangelog(topic: string, partitions: readonly number[]): Promise<Map<string, Buffer>>;
  /** The next offset of one partition. Failures are DownstreamUnavailableError (retried). */
  endOffset(topic: string, partition: number): Promise<number>;
  /** A group's committed offsets of the partitions (0 where it has committed nothing). */
  committedOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
  ): Promise<Map<number, number>>;
  /** The event log on the same platform (reads of compacted topics, publishing), shared. */
  eventLog(): Promise<EventLogPort>;
  /** An exactly-once consume-transform-produce processor (outputs and offsets in one commit). */
  createProcessor(spec: ProcessorSpec): Promise<StageProcessor>;
  /** An at-least-once consumer for a sink outside the log (committed after the handler). */
  createSinkConsumer(spec: SinkConsumerSpec): Promise<SinkConsumer>;
  /**
   * A reader of every partition of a topic from a point in time on, following new records until
   * stopped: the input of a materialised view held in memory (a GlobalKTable). No consumer group
   * offsets: every tail reads everything, and a restarted one reads again from its timestamp.
   */
  createTail<E>(spec: TailSpec<E>): Promise<TopicTail>;
  /** Releases what the platform opened (admin clients, producers); processors stop themselves. */
  close(): Promise<void>;
}

export interface StreamTopic {
  topic: string;
  /** Keeps the latest record per key (changelogs, memories, episodes). */
  compacted?: boolean;
  /** Also create `<topic>.dlq` (default true; changelogs have none). */
  withDeadLetter?: boolean;
}

export interface ProcessorSpec {
  groupId: string;
  /** The service named in dead-letter headers. */
  service: string;
  retry: BackoffOptions;
  /**
   * Stable per instance of the service (distributed mode: the transactional id is
   * `<group>-<instanceId>`, so a restarted instance fences its predecessor's transactions).
   */
  instanceId?: string;
  /** After every (re)assignment: this member's partitions per topic. */
  onAssignment?: (assignment: Record<string, number[]>) => void;
}

export interface StageProcessor extends TransactionalProducer {
  /** Since start: records processed, dead-lettered, retries, committed transactions. */
  readonly counters: ProcessorCounters;
  subscribe<E>(codec: TopicCodec<E>, stage: ExactlyOnceStage<E>): this;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ProcessorCounters {
  processed: number;
  deadLettered: number;
  retries: number;
  transactions: number;
}

export interface SinkConsumerCounters {
  processed: number;
  deadLettered: number;
  retries: number;
}

export interface SinkConsumerSpec {
  groupId: string;
  service: string;
  retry: BackoffOptions;
  /** Where a group without committed offsets starts (default: the beginning). */
  fromBeginning?: boolean;
}

export interface TailSpec<E> {
  /** The topic (it must exist) and how its records decode. */
  codec: TopicCodec<E>;
  /**
   * Epoch millis: each partition is read from its first record stamped at or after this (from
   * its end when it has none that recent); partitions created later are read from their start.
   */
  fromTimestamp: number;
  /**
   * One partition's decoded events, in offset order (tombstones are passed over). A view has no
   * dead letters: if the handler throws, its records are reported to `onSkipped` and reading
   * goes on — it should not throw.
   */
  handle(items: Delivered<E>[]): Promise<void>;
  /** A record passed over (it cannot be decoded, or its batch's handler failed), and why. */
  onSkipped(skipped: TailSkip): void;
}

export interface TailSkip {
  topic: string;
  partition: number;
  /** Decimal, as Delivered has it. */
  offset: string;
  error: unknown;
}

export interface TopicTail {
  /** Since start: events handed to the handler, records passed over. */
  readonly counters: { handled: number; skipped: number };
  /** Resolves once reading has begun (not once it has caught up). */
  start(): Promise<void>;
  /** Stops reading; the batch in hand finishes first. */
  stop(): Promise<void>;
}

export interface SinkConsumer {
  /** Since start: records handled (committed), dead-lettered, and retries of failed batches. */
  readonly counters: SinkConsumerCounters;
  /** `tombstones: true`: null values (deletions on compacted topics) reach the handler too. */
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: (items: Delivered<E>[]) => Promise<void>,
    options?: { tombstones?: false },
  ): this;
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: (items: DeliveredOrTombstone<E>[]) => Promise<void>,
    options: { tombstones: true },
  ): this;
  start(): Promise<void>;
  stop(): Promise<void>;
}
