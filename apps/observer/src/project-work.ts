import {
  decodeStateJson,
  type CommitFileChanges,
  encodeStateJson,
  type EpisodeRange,
  type ObserverSignal,
  type PromotionRequestLike,
  type SessionSummary,
  type TopicCodec,
} from '@engram/core';
import { valueSubject } from '@engram/core';

/**
 * A promotion the session stage asks for: one trigger's scratchpad content, already cut out
 * (core's definition: the project stage re-evaluates them in core's canonical order).
 */
export type PromotionRequest = PromotionRequestLike;

/**
 * What one session-stage transaction hands to the project stage for one project: the signals it
 * observed (folded into the project's statistics), the summaries of sessions that ended, and the
 * promotions that are due — applied in that order.
 *
 * Why a second stage. Sessions are partitioned by sessionId, but the statistics the rules read
 * (co-access ratios, error recurrences, the last 30 sessions) are per project, across sessions
 * on every partition. So the session stage repartitions by project through this topic, the way a
 * Kafka Streams repartition topic does, and the project stage owns each project's statistics.
 */
export interface ProjectWork {
  v: 1;
  tenantId: string;
  projectId: string;
  signals: ObserverSignal[];
  summaries: SessionSummary[];
  promotions: PromotionRequest[];
  /**
   * The segmenter's episodes (their prompt ranges), so a memory names the episode of its newest
   * evidence. Optional: records written before episodes were followed have none.
   */
  episodes?: EpisodeRange[];
  /**
   * Commits' renames and deletions, for the memories about those files (issue #20). Optional:
   * records written before staleness was followed have none.
   */
  fileChanges?: CommitFileChanges[];
}

export const projectKeyOf = (scope: { tenantId: string; projectId: string }) =>
  JSON.stringify([scope.tenantId, scope.projectId]);

export function emptyProjectWork(tenantId: string, projectId: string): ProjectWork {
  return {
    v: 1,
    tenantId,
    projectId,
    signals: [],
    summaries: [],
    promotions: [],
    episodes: [],
    fileChanges: [],
  };
}

/**
 * The internal topic's Avro envelope. The payload is the core's own JSON (gzipped when large,
 * like the changelog), versioned by `v`: it is a repartition topic between two stages of one
 * service, and a schema per signal type would copy the core's types for no other reader.
 */
const PROJECT_WORK_SCHEMA = {
  type: 'record',
  name: 'ObserverProjectWork',
  namespace: 'engram.internal.v1',
  doc: "The observer's repartition topic: a session stage transaction's work for one project.",
  fields: [
    { name: 'tenantId', type: 'string' },
    { name: 'projectId', type: 'string' },
    { name: 'work', type: 'bytes', doc: 'ProjectWork as JSON, gzipped above 64 KB' },
  ],
};

interface ProjectWorkAvro {
  tenantId: string;
  projectId: string;
  work: Buffer;
}

export function projectWorkCodec(topic: string): TopicCodec<ProjectWork> {
  return {
    topic,
    subject: valueSubject(topic),
    schema: PROJECT_WORK_SCHEMA,
    toAvro: (work): ProjectWorkAvro => ({
      tenantId: work.tenantId,
      projectId: work.projectId,
      work: encodeStateJson(work),
    }),
    fromAvro: (value) => decodeStateJson<ProjectWork>((value as ProjectWorkAvro).work),
    key: projectKeyOf,
    validate: (work) => (work.v === 1 ? [] : [`unknown ProjectWork version ${String(work.v)}`]),
  };
}

export function isEmptyProjectWork(work: ProjectWork): boolean {
  const parts = [
    work.signals,
    work.summaries,
    work.promotions,
    work.episodes ?? [],
    work.fileChanges ?? [],
  ];
  return parts.every((part) => part.length === 0);
}
