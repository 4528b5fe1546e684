import type { Memory, MemoryScope, MemoryType } from '@engram/contracts';
import {
  anyOfFilter,
  errorMessage,
  PRUNE_RULE,
  pruneCreatedBefore,
  prunedReason,
  prunedVersion,
  selectForPruning,
  type PruneCriteria,
} from '@engram/core';
import { count } from './cli-text';
import { STORE_WINDOW, storedMemories, type MemoryLifecycle } from './memory-lifecycle';

export interface PruneRequest {
  criteria: PruneCriteria;
  tenantId: string;
  projectId: string;
  dryRun: boolean;
  /** The clock the selection ages memories by. */
  now: number;
  /** Recorded as the Feedback's userId. */
  by?: string;
  /** Told what the run could not cover (a store listing cut at its window). */
  warn?: (message: string) => void;
}

export interface PruneOutcome {
  memoryId: string;
  tenantId: string;
  projectId: string;
  memoryType: MemoryType;
  scope: MemoryScope;
  reason: string;
  content: string;
  status: 'would prune' | 'pruned' | 'failed';
  error?: string;
}

/**
 * Prunes the project's memories the core's rule selects (`selectForPruning`), never silently:
 * each gets a final version tagged `pruned:<reason>` and stale (on the log, so `engram memory
 * history` shows it), then its tombstone through Feedback DELETE — the path a person's delete
 * takes, which also takes it out of the retrieval store at once. The memories are read from the
 * retrieval store, which holds what the log does not: access times (idleness) and supersession.
 * A memory whose pruned version was written by an interrupted run only gets its tombstone.
 * `dryRun`: nothing is written.
 */
export async function pruneMemories(
  lifecycle: Pick<MemoryLifecycle, 'log' | 'codec' | 'stack' | 'hasTopic'>,
  request: PruneRequest,
): Promise<PruneOutcome[]> {
  if (!lifecycle.hasTopic) return [];
  const scope = { tenantId: request.tenantId, projectId: request.projectId };
  const { criteria } = request;
  // The store narrows to a superset of the rule's choice (an interrupted run's pruned versions
  // keep their createdAt, so they are among it); the rule decides.
  const memories = await storedMemories(lifecycle.stack.store, scope, null, [
    ...(criteria.types.length > 0 ? [anyOfFilter('memoryType', criteria.types)] : []),
    ...(criteria.scopes.length > 0 ? [anyOfFilter('scope', criteria.scopes)] : []),
    {
      kind: 'range',
      field: 'createdAt',
      lte: pruneCreatedBefore(criteria, PRUNE_RULE, request.now),
    },
  ]);
  if (memories.length >= STORE_WINDOW) {
    request.warn?.(
      `only the ${STORE_WINDOW} most recently written candidates were considered: ` +
        'run again, or narrow with --type/--scope',
    );
  }
  const unfinished = memories.flatMap((memory) => {
    const reason = prunedReason(memory);
    return reason === null ? [] : [{ memory, reason, resumed: true }];
  });
  const selected = selectForPruning(memories, request.criteria, PRUNE_RULE, request.now).map(
    (candidate) => ({ ...candidate, resumed: false }),
  );
  const outcomes: PruneOutcome[] = [];
  for (const { memory, reason, resumed } of [...unfinished, ...selected]) {
    const outcome = pruneOutcome(memory, reason);
    if (request.dryRun) {
      outcomes.push(outcome);
      continue;
    }
    try {
      if (!resumed) {
        const final = prunedVersion(memory, reason, request.now);
        // Who pruned it is kept on the version (a tombstone carries nothing).
        const by = request.by !== undefined && { userId: request.by };
        await lifecycle.log.publish(lifecycle.codec, [{ type: 'Memory', ...final, ...by }]);
      }
      await lifecycle.stack.feedback.feedback({
        ...scope,
        memoryId: memory.memoryId,
        action: 'delete',
        ...(request.by !== undefined && { userId: request.by }),
      });
      outcomes.push({ ...outcome, status: 'pruned' });
    } catch (error) {
      outcomes.push({ ...outcome, status: 'failed', error: errorMessage(error) });
    }
  }
  return outcomes;
}

function pruneOutcome(memory: Memory, reason: string): PruneOutcome {
  return {
    memoryId: memory.memoryId,
    tenantId: memory.tenantId,
    projectId: memory.projectId,
    memoryType: memory.memoryType,
    scope: memory.scope,
    reason,
    content: memory.content,
    status: 'would prune',
  };
}

/** The outcomes for people: one line per memory, failures with their reason. */
export function formatPrune(outcomes: readonly PruneOutcome[], dryRun: boolean): string {
  if (outcomes.length === 0) return 'nothing to prune';
  const pruned = outcomes.filter((o) => o.status !== 'failed').length;
  const head = dryRun
    ? `would prune ${count(outcomes.length, 'memory', 'memories')} (dry run: nothing written)`
    : `pruned ${count(pruned, 'memory', 'memories')}` +
      (pruned < outcomes.length ? `, ${outcomes.length - pruned} failed` : '') +
      ' (final version tagged pruned:<reason>, then a tombstone; see `engram memory history ID`)';
  const lines = [head];
  for (const o of outcomes) {
    const text = o.content.length > 80 ? `${o.content.slice(0, 79)}…` : o.content;
    const failed = o.status === 'failed' ? ` FAILED: ${o.error}` : '';
    lines.push(
      `- \`${o.memoryId}\` ${o.projectId} ${o.memoryType}/${o.scope} [${o.reason}]: ${text}${failed}`,
    );
  }
  return lines.join('\n');
}
