import type { Memory, MemoryRelation } from '@engram/contracts';
import { FILE_DELETED_TAG, RENAMED_FROM_TAG } from './staleness';
import { SUPERSEDED_BY_TAG } from './superseded';

/**
 * A memory's history (issue #20, `engram memory history ID`): every version the log holds of it
 * — each a record under its id on memory.memories.v1, a tombstone its deletion — and what
 * changed from one version to the next, with why when the records say (their tags: a rename, a
 * deleted file, a supersession, a pruning; the flags a person's feedback sets). Pure: the
 * command reads the log and prints what this returns.
 */

/** The tag a pruned memory's final version carries, followed by the reason (`pruned:stale`). */
export const PRUNED_TAG = 'pruned:';

/** The fields a change names (a tombstone is `deleted`, the first version `created`). */
export type MemoryChangeField =
  | 'created'
  | 'deleted'
  | 'content'
  | 'confidence'
  | 'staleAt'
  | 'relatedFiles'
  | 'tags'
  | 'relations'
  | 'needsReview'
  | 'userVerified'
  | 'memoryType'
  | 'scope';

export interface MemoryVersionChange {
  field: MemoryChangeField;
  /** The value before (null for a new memory or an unset field). */
  from: unknown;
  /** The value after (null for a deletion or a cleared field). */
  to: unknown;
  /** For list fields: what the next version adds and drops. */
  added?: string[];
  removed?: string[];
}

/** One version of a memory as the history shows it. */
export interface MemoryHistoryEntry {
  /**
   * `log`: a record of memory.memories.v1. `store`: the retrieval store's current document where
   * it differs from the last record (what the indexer derives and writes to the store only, such
   * as a supersession); partition and offset are -1 then.
   */
  source: 'log' | 'store';
  /** Where the record is on the log (partition, offset), in log order. */
  partition: number;
  offset: number;
  /** The record's time (a tombstone: its log timestamp, when the log keeps one). */
  timestamp: number | null;
  /** The version; null for a tombstone. */
  memory: Memory | null;
  changes: MemoryVersionChange[];
  /** Why it changed, as far as the record says (empty when it says nothing). */
  reasons: string[];
}

/**
 * What changed from `prev` to `next`. `prev` null: the memory's first version (`created`);
 * `next` null: its tombstone (`deleted`). Two versions with nothing compared changed give [].
 * Only the fields people act on are compared (not access counts or embeddings).
 */
export function memoryVersionChanges(
  prev: Memory | null,
  next: Memory | null,
): MemoryVersionChange[] {
  if (prev === null && next === null) return [];
  if (prev === null) return [{ field: 'created', from: null, to: next!.memoryId }];
  if (next === null) return [{ field: 'deleted', from: prev.memoryId, to: null }];
  const changes: MemoryVersionChange[] = [];
  const scalar = (field: MemoryChangeField, from: unknown, to: unknown) => {
    if (from !== to) changes.push({ field, from, to });
  };
  scalar('memoryType', prev.memoryType, next.memoryType);
  scalar('scope', prev.scope, next.scope);
  scalar('content', prev.content, next.content);
  scalar('confidence', prev.confidence, next.confidence);
  scalar('staleAt', prev.staleAt ?? null, next.staleAt ?? null);
  list(changes, 'relatedFiles', prev.relatedFiles ?? [], next.relatedFiles ?? []);
  list(changes, 'tags', prev.tags ?? [], next.tags ?? []);
  list(
    changes,
    'relations',
    (prev.relations ?? []).map(relationLabel),
    (next.relations ?? []).map(relationLabel),
  );
  scalar('needsReview', prev.needsReview, next.needsReview);
  scalar('userVerified', prev.userVerified, next.userVerified);
  return changes;
}

/**
 * Why `next` differs from `prev`, from what the records carry: the tags the lifecycle adds
 * (`renamed-from:`, `file-deleted:`, `superseded-by:`, `pruned:`), the relations a supersession
 * writes, the flags a person's feedback sets, and for a first version its trigger and source.
 */
export function memoryVersionReasons(prev: Memory | null, next: Memory | null): string[] {
  if (prev === null && next === null) return [];
  if (prev === null) {
    const memory = next!;
    const triggers = (memory.tags ?? [])
      .filter((tag) => tag.startsWith('trigger:'))
      .map((tag) => tag.slice('trigger:'.length));
    return [
      `created (source ${memory.source}${triggers.length > 0 ? `, trigger ${triggers.join(', ')}` : ''})`,
    ];
  }
  if (next === null) {
    const pruned = prunedReason(prev);
    return [
      pruned === null
        ? 'deleted (a tombstone: Feedback DELETE, or a duplicate of another memory)'
        : `deleted after pruning (${pruned})`,
    ];
  }
  const reasons: string[] = [];
  const before = new Set(prev.tags ?? []);
  for (const tag of next.tags ?? []) {
    if (before.has(tag)) continue;
    if (tag.startsWith(RENAMED_FROM_TAG)) {
      reasons.push(`file renamed from ${tag.slice(RENAMED_FROM_TAG.length)}`);
    } else if (tag.startsWith(FILE_DELETED_TAG)) {
      reasons.push(`file deleted: ${tag.slice(FILE_DELETED_TAG.length)}`);
    } else if (tag.startsWith(SUPERSEDED_BY_TAG)) {
      reasons.push(`superseded by ${tag.slice(SUPERSEDED_BY_TAG.length)}`);
    } else if (tag.startsWith(PRUNED_TAG)) {
      reasons.push(`pruned (${tag.slice(PRUNED_TAG.length)})`);
    }
  }
  const hadRelation = new Set((prev.relations ?? []).map(relationLabel));
  for (const relation of next.relations ?? []) {
    if (relation.relationType !== 'supersedes' || hadRelation.has(relationLabel(relation))) {
      continue;
    }
    reasons.push(`supersedes ${relation.targetMemoryId ?? relation.targetFilePath}`);
  }
  const fileReasons = reasons.length > 0;
  if (!prev.userVerified && next.userVerified) {
    reasons.push(
      prev.content === next.content
        ? 'confirmed by a person (feedback)'
        : 'corrected by a person (feedback)',
    );
  } else if (!prev.needsReview && next.needsReview && next.confidence < prev.confidence) {
    reasons.push('flagged wrong (feedback): back to review');
  } else if ((prev.staleAt ?? null) === null && (next.staleAt ?? null) !== null && !fileReasons) {
    reasons.push('marked stale (feedback: outdated, or its files are gone)');
  }
  // Who: the person a feedback or a prune names (`--by`), when this version is theirs.
  if (reasons.length > 0 && next.userId && next.userId !== prev.userId) {
    reasons.push(`written by ${next.userId}`);
  }
  return reasons;
}

/** The reason of the memory's `pruned:` tag, or null when it was not pruned. */
export function prunedReason(memory: Pick<Memory, 'tags'>): string | null {
  const tag = (memory.tags ?? []).find((t) => t.startsWith(PRUNED_TAG));
  return tag === undefined ? null : tag.slice(PRUNED_TAG.length);
}

/** A version or a tombstone of the memory, as read from the log. */
export interface LoggedMemoryVersion {
  /** Default `log`. */
  source?: 'log' | 'store';
  partition: number;
  offset: number;
  timestamp: number | null;
  memory: Memory | null;
}

/**
 * The history of one memory from its records in log order: each with its changes from the
 * version before (a version after a tombstone is the memory created again).
 */
export function memoryHistory(versions: readonly LoggedMemoryVersion[]): MemoryHistoryEntry[] {
  const entries: MemoryHistoryEntry[] = [];
  let prev: Memory | null = null;
  for (const version of versions) {
    // A tombstone with no version before it (compaction dropped them) still deletes.
    const orphanTombstone = prev === null && version.memory === null;
    entries.push({
      source: version.source ?? 'log',
      partition: version.partition,
      offset: version.offset,
      timestamp: version.timestamp ?? version.memory?.timestamp ?? null,
      memory: version.memory,
      changes: orphanTombstone
        ? [{ field: 'deleted', from: null, to: null }]
        : memoryVersionChanges(prev, version.memory),
      reasons: orphanTombstone
        ? ['deleted (a tombstone; the versions before it were compacted away)']
        : memoryVersionReasons(prev, version.memory),
    });
    prev = version.memory;
  }
  return entries;
}

function list(
  changes: MemoryVersionChange[],
  field: MemoryChangeField,
  from: readonly string[],
  to: readonly string[],
): void {
  const before = new Set(from);
  const after = new Set(to);
  const added = [...after].filter((item) => !before.has(item));
  const removed = [...before].filter((item) => !after.has(item));
  if (added.length === 0 && removed.length === 0 && from.length === to.length) {
    if (from.every((item, i) => item === to[i])) return;
  }
  changes.push({ field, from: [...from], to: [...to], added, removed });
}

function relationLabel(relation: MemoryRelation): string {
  return `${relation.relationType}:${relation.targetMemoryId ?? relation.targetFilePath ?? ''}`;
}
