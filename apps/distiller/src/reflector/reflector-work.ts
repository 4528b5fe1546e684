import {
  decodeStateJson,
  encodeStateJson,
  parseProposalId,
  type Distillation,
  type ReviewCommand,
  type TopicCodec,
} from '@engram/core';
import { valueSubject } from '@engram/core';

/**
 * What reaches a project's reflector, through the distiller's internal topic keyed by project: a
 * distillation (from the distiller stage, in the transaction that distilled it) or a reviewer's
 * decision (from the review API or `engram review`). One topic keeps both in order per project,
 * and the reflector stage is the only writer of a project's proposals.
 */
export type ReflectorWork =
  | { v: 1; kind: 'distillation'; tenantId: string; projectId: string; distillation: Distillation }
  | { v: 1; kind: 'review'; tenantId: string; projectId: string; command: ReviewCommand };

/** The key (and changelog key) of a project. */
export const reflectorProjectKey = (scope: { tenantId: string; projectId: string }): string =>
  JSON.stringify([scope.tenantId, scope.projectId]);

export function distillationWork(distillation: Distillation): ReflectorWork {
  const { tenantId, projectId } = distillation;
  return { v: 1, kind: 'distillation', tenantId, projectId, distillation };
}

export function reviewWork(command: ReviewCommand): ReflectorWork {
  const { tenantId, projectId } = command;
  return { v: 1, kind: 'review', tenantId, projectId, command };
}

/**
 * The internal topic's Avro envelope: the core's JSON (gzipped when large) as bytes, versioned by
 * `v` — a repartition topic between two parts of one service, like the observer's project work.
 */
const REFLECTOR_WORK_SCHEMA = {
  type: 'record',
  name: 'DistillerReflectorWork',
  namespace: 'engram.internal.v1',
  doc: "The distiller's reflector input: a distillation or a review decision, keyed by project.",
  fields: [
    { name: 'tenantId', type: 'string' },
    { name: 'projectId', type: 'string' },
    { name: 'work', type: 'bytes', doc: 'ReflectorWork as JSON, gzipped above 64 KB' },
  ],
};

interface ReflectorWorkAvro {
  tenantId: string;
  projectId: string;
  work: Buffer;
}

export function reflectorWorkCodec(topic: string): TopicCodec<ReflectorWork> {
  return {
    topic,
    subject: valueSubject(topic),
    schema: REFLECTOR_WORK_SCHEMA,
    toAvro: (work): ReflectorWorkAvro => ({
      tenantId: work.tenantId,
      projectId: work.projectId,
      work: encodeStateJson(work),
    }),
    fromAvro: (value) => decodeStateJson<ReflectorWork>((value as ReflectorWorkAvro).work),
    key: reflectorProjectKey,
    validate: validateWork,
  };
}

function validateWork(work: ReflectorWork): string[] {
  if (work.v !== 1) return [`unknown ReflectorWork version ${String(work.v)}`];
  if (work.tenantId === '' || work.projectId === '') return ['tenantId and projectId are required'];
  if (work.kind === 'distillation') return [];
  if (work.kind !== 'review') {
    return [`unknown ReflectorWork kind ${String((work as { kind: unknown }).kind)}`];
  }
  const { command } = work;
  if (parseProposalId(command.proposalId) === null) {
    return [`proposalId ${command.proposalId} is not p-YYYYMMDD-NNN`];
  }
  if (!['approve', 'edit-and-approve', 'reject'].includes(command.action)) {
    return [`unknown review action ${command.action}`];
  }
  return [];
}
