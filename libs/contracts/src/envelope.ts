/**
 * Event time in TypeScript: epoch milliseconds (UTC) as a plain `number`. The Avro schemas annotate
 * these fields `{"type": "long", "logicalType": "timestamp-millis"}`, and avsc is used WITHOUT a
 * `logicalTypes` mapping (see AVRO_TYPE_OPTIONS), so encode and decode both see the number.
 */
export type EpochMillis = number;

/** The envelope every record of `schemas/avro` starts with (SPEC §3). */
export interface EventEnvelope {
  /** UUID; the idempotency key. */
  eventId: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  /** The agent, or for derived records (episodes, memories, proposals) the Engram service. */
  agentId: string;
  userId: string | null;
  timestamp: EpochMillis;
  schemaVersion: number;
}

/** The current schemaVersion producers write. */
export const SCHEMA_VERSION = 1;

const REQUIRED_IDS = ['eventId', 'tenantId', 'projectId', 'sessionId', 'agentId'] as const;

export interface FieldIssue {
  field: string;
  message: string;
}

/** Semantic checks of the envelope beyond the schema: empty ids, impossible times and versions. */
export function envelopeIssues(event: EventEnvelope): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of REQUIRED_IDS) {
    if (event[field].trim() === '') issues.push({ field, message: 'must not be empty' });
  }
  if (!Number.isSafeInteger(event.timestamp) || event.timestamp < 0) {
    issues.push({
      field: 'timestamp',
      message: `${event.timestamp} is not a valid epoch millisecond`,
    });
  }
  if (!Number.isInteger(event.schemaVersion) || event.schemaVersion < 1) {
    issues.push({
      field: 'schemaVersion',
      message: `${event.schemaVersion} is not a positive integer`,
    });
  }
  return issues;
}

/** envelopeIssues as strings, each naming its field; fits `TopicCodec.validate`. */
export function envelopeProblems(event: EventEnvelope): string[] {
  return envelopeIssues(event).map(({ field, message }) => `${field} ${message}`);
}

/** A methodology-neutral reference to a unit of work (seed 002 §3). */
export interface WorkUnitRef {
  /** Methodology plugin id: native, bmad, tdd, agile, … */
  methodology: string;
  /** Outermost container to innermost work item, e.g. ['spec_042', 'subtask_3']. */
  hierarchy: string[];
  label: string;
}
