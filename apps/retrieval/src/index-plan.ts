import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import type { Delivered } from '@engram/core';
import {
  documentId,
  episodeDocument,
  memoryDocument,
  turnDocument,
  type SearchFields,
} from '@engram/core';
import type { DeliveredOrTombstone, DeliveredTombstone } from '@engram/core';

/** A write the indexer will make once the text is embedded. */
export type PlannedDelete = { action: 'delete'; index: string; id: string };

export type PlannedOperation =
  { action: 'index'; index: string; id: string; text: string; body: SearchFields } | PlannedDelete;

export interface Plan {
  operations: PlannedOperation[];
  /** Records that are deliberately not indexed (agent and system prompts). */
  skipped: number;
}

function upsert(index: string, document: { id: string; body: SearchFields }): PlannedOperation {
  return { action: 'index', index, id: document.id, text: document.body.text, body: document.body };
}

/**
 * A tombstone deletes the document of its key (the memoryId or episodeId of the compacted topic).
 * The consumer dead-letters tombstones without a key; documentId refuses an id Elasticsearch would.
 */
function remove(index: string, item: DeliveredTombstone, keyField: string): PlannedDelete {
  return { action: 'delete', index, id: documentId(item.key, keyField) };
}

export function planMemories(items: readonly DeliveredOrTombstone<Memory>[], index: string): Plan {
  return {
    operations: items.map((item) =>
      item.event === null
        ? remove(index, item, 'memoryId')
        : upsert(index, memoryDocument(item.event)),
    ),
    skipped: 0,
  };
}

/**
 * A memory's tombstone also removes its access counters, where they are kept apart (the
 * Elasticsearch store): a memory re-created under the same id starts uncounted.
 */
export function planAccessCleanup(
  items: readonly DeliveredOrTombstone<Memory>[],
  accessIndex: string,
): PlannedDelete[] {
  const deletes = new Map<string, PlannedDelete>();
  for (const item of items) {
    if (item.event === null) deletes.set(item.key, remove(accessIndex, item, 'memoryId'));
  }
  return [...deletes.values()];
}

export function planEpisodes(items: readonly DeliveredOrTombstone<Episode>[], index: string): Plan {
  return {
    operations: items.map((item) =>
      item.event === null
        ? remove(index, item, 'episodeId')
        : upsert(index, episodeDocument(item.event)),
    ),
    skipped: 0,
  };
}

/** User prompts become turns; agent and system prompts are counted as skipped. */
export function planTurns(items: readonly Delivered<PromptSubmitted>[], index: string): Plan {
  const operations: PlannedOperation[] = [];
  for (const item of items) {
    const document = turnDocument(item.event);
    if (document) operations.push(upsert(index, document));
  }
  return { operations, skipped: items.length - operations.length };
}

/**
 * Only the last operation per document, in the order of those last operations. Within a batch a
 * later record of the same key supersedes an earlier one (compaction semantics), so the earlier
 * one need not be embedded or sent at all.
 */
export function lastWins(operations: readonly PlannedOperation[]): PlannedOperation[] {
  const last = new Map<string, number>();
  operations.forEach((op, i) => last.set(`${op.index}\u0000${op.id}`, i));
  return operations.filter((op, i) => last.get(`${op.index}\u0000${op.id}`) === i);
}
