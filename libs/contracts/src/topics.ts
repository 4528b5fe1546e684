import type { PromptSubmitted, ToolCallObserved } from './agent-events';
import type { Episode, EpisodeClosed, EpisodeOpened } from './episode-events';
import type {
  CommitMade,
  CompactionPending,
  FileManifest,
  RememberRequested,
  SessionEnded,
  SessionStarted,
  SubtaskValidated,
  TaskClassified,
  ValidationFailed,
  ValidationPassed,
} from './lifecycle-events';
import type { Memory } from './memory';
import type { Proposal } from './proposal';
import type { ThreadLinkDecision } from './thread-links';

/** Every top-level Avro record of `schemas/avro`, by record name (namespace engram.v1). */
export interface EventRecords {
  PromptSubmitted: PromptSubmitted;
  ToolCallObserved: ToolCallObserved;
  SessionStarted: SessionStarted;
  SessionEnded: SessionEnded;
  CompactionPending: CompactionPending;
  ValidationPassed: ValidationPassed;
  ValidationFailed: ValidationFailed;
  SubtaskValidated: SubtaskValidated;
  CommitMade: CommitMade;
  RememberRequested: RememberRequested;
  FileManifest: FileManifest;
  TaskClassified: TaskClassified;
  EpisodeOpened: EpisodeOpened;
  EpisodeClosed: EpisodeClosed;
  Episode: Episode;
  Memory: Memory;
  Proposal: Proposal;
  ThreadLinkDecision: ThreadLinkDecision;
}
export type RecordName = keyof EventRecords;

/**
 * An event tagged with its record name: `{ type: 'SessionEnded', ...fields }`. This is the shape of
 * a replay line (SPEC §12) and of the events of union topics in TypeScript; `type` is not an Avro
 * field (the union branch carries it, see toAvroValue / fromAvroValue).
 */
export type Typed<N extends RecordName = RecordName> = N extends RecordName
  ? { type: N } & EventRecords[N]
  : never;

export const AVRO_NAMESPACE = 'engram.v1';

export interface TopicSpec {
  readonly topic: string;
  /** File name under `schemas/avro`. */
  readonly avroFile: string;
  /** The event field whose value is the Kafka key. */
  readonly keyField: string;
  readonly compacted: boolean;
  /** Dead-letter topic: `<topic>.dlq`. */
  readonly dlq: string;
  /** The record names the topic carries; more than one means a top-level Avro union. */
  readonly records: readonly RecordName[];
  readonly union: boolean;
}

/** The topics of SPEC §3 (the segmenter's internal changelog `segmenter.state.v1` is not one). */
export const TOPICS = {
  prompts: {
    topic: 'agent.prompts.v1',
    avroFile: 'agent.prompts.v1.avsc',
    keyField: 'sessionId',
    compacted: false,
    dlq: 'agent.prompts.v1.dlq',
    records: ['PromptSubmitted'],
    union: false,
  },
  toolCalls: {
    topic: 'agent.tool-calls.v1',
    avroFile: 'agent.tool-calls.v1.avsc',
    keyField: 'sessionId',
    compacted: false,
    dlq: 'agent.tool-calls.v1.dlq',
    records: ['ToolCallObserved'],
    union: false,
  },
  lifecycle: {
    topic: 'agent.lifecycle.v1',
    avroFile: 'agent.lifecycle.v1.avsc',
    keyField: 'sessionId',
    compacted: false,
    dlq: 'agent.lifecycle.v1.dlq',
    records: [
      'SessionStarted',
      'SessionEnded',
      'CompactionPending',
      'ValidationPassed',
      'ValidationFailed',
      'SubtaskValidated',
      'CommitMade',
      'RememberRequested',
      'FileManifest',
      'TaskClassified',
    ],
    union: true,
  },
  episodeBoundaries: {
    topic: 'memory.episode-boundaries.v1',
    avroFile: 'memory.episode-boundaries.v1.avsc',
    keyField: 'sessionId',
    compacted: false,
    dlq: 'memory.episode-boundaries.v1.dlq',
    records: ['EpisodeOpened', 'EpisodeClosed'],
    union: true,
  },
  episodes: {
    topic: 'memory.episodes.v1',
    avroFile: 'memory.episodes.v1.avsc',
    keyField: 'episodeId',
    compacted: true,
    dlq: 'memory.episodes.v1.dlq',
    records: ['Episode'],
    union: false,
  },
  memories: {
    topic: 'memory.memories.v1',
    avroFile: 'memory.memories.v1.avsc',
    keyField: 'memoryId',
    compacted: true,
    dlq: 'memory.memories.v1.dlq',
    records: ['Memory'],
    union: false,
  },
  proposals: {
    topic: 'memory.proposals.v1',
    avroFile: 'memory.proposals.v1.avsc',
    keyField: 'proposalId',
    compacted: true,
    dlq: 'memory.proposals.v1.dlq',
    records: ['Proposal'],
    union: false,
  },
  threadLinks: {
    topic: 'memory.thread-links.v1',
    avroFile: 'memory.thread-links.v1.avsc',
    keyField: 'decisionId',
    compacted: true,
    dlq: 'memory.thread-links.v1.dlq',
    records: ['ThreadLinkDecision'],
    union: false,
  },
} as const satisfies Record<string, TopicSpec>;

export type TopicKey = keyof typeof TOPICS;
type AnyTopic = (typeof TOPICS)[TopicKey];
export type TopicName = AnyTopic['topic'];
export type TopicOf<T extends TopicName> = Extract<AnyTopic, { topic: T }>;
/** The (typed) events a topic carries. */
export type EventOfTopic<T extends TopicName> = Typed<TopicOf<T>['records'][number]>;
export type LifecycleEvent = EventOfTopic<'agent.lifecycle.v1'>;
export type EpisodeBoundaryEvent = EventOfTopic<'memory.episode-boundaries.v1'>;

// Compile-time guard: every record of EventRecords belongs to a topic.
type Covered = AnyTopic['records'][number];
const everyRecordHasATopic: [RecordName] extends [Covered] ? true : false = true;
void everyRecordHasATopic;

export const TOPIC_LIST: readonly TopicSpec[] = Object.values(TOPICS);

const BY_RECORD = new Map<string, TopicSpec>(
  TOPIC_LIST.flatMap((spec) => spec.records.map((name) => [name, spec] as const)),
);
const BY_TOPIC = new Map<string, TopicSpec>(TOPIC_LIST.map((spec) => [spec.topic, spec]));

export const RECORD_NAMES: readonly RecordName[] = TOPIC_LIST.flatMap((spec) => spec.records);

export function isRecordName(name: unknown): name is RecordName {
  return typeof name === 'string' && BY_RECORD.has(name);
}

/** The topic a record is published to (the replay `type` decides the topic). */
export function topicOfRecord(name: RecordName): TopicSpec {
  return BY_RECORD.get(name)!;
}

export function topicSpec(topic: string): TopicSpec | undefined {
  return BY_TOPIC.get(topic);
}

/** The Kafka key of an event: its topic's key field. */
export function eventKey(event: Typed): string {
  const { keyField } = topicOfRecord(event.type);
  return (event as unknown as Record<string, string>)[keyField];
}
