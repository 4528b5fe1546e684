import type { Memory, MemoryRelation } from '@engram/contracts';
import {
  loadRelatedMemories,
  propagateConfidenceChanges,
  type ConfidenceChange,
} from '../../memory/confidence-propagation';
import type { MemoriesById } from '../../ports/memories-by-file';

/**
 * Confidence propagation for the observer's re-promotions (issue #20, SPEC §6): a new version of
 * a memory it promoted before, with another confidence than the committed version (more
 * evidence, a validation failure), moves the memories the relations reach, as a person's
 * Feedback does (`propagateConfidence`: the seed's coefficients, stop below 0.05, cycle-safe).
 *
 * Returns what the transaction writes: `written` in its order — each re-promotion keeping the
 * memory-to-memory relations of its committed version, which the observer never writes itself
 * and must not drop — then the propagated versions. Deterministic: it reads only `written` and
 * the committed versions (what the topic held when the transaction began), never the clock, so a
 * redelivered batch writes the same records; a replay over a topic that already holds them finds
 * the committed confidence already changed and moves nothing again.
 */
export async function withPropagatedConfidence(
  written: readonly Memory[],
  repromoted: ReadonlySet<string>,
  memoriesWithIds: MemoriesById['memoriesWithIds'],
): Promise<Memory[]> {
  const output = [...written];
  const propagated: Memory[] = [];
  for (const scope of scopesOf(written.filter((m) => repromoted.has(m.memoryId)))) {
    const inScope = (m: Memory) => m.tenantId === scope.tenantId && m.projectId === scope.projectId;
    const repromotedHere = written.filter((m) => inScope(m) && repromoted.has(m.memoryId));
    const committed = new Map(
      (await memoriesWithIds(scope, [...new Set(repromotedHere.map((m) => m.memoryId))])).map(
        (m) => [m.memoryId, m],
      ),
    );
    const changes: ConfidenceChange[] = [];
    output.forEach((memory, i) => {
      const previous = committed.get(memory.memoryId);
      if (!inScope(memory) || !repromoted.has(memory.memoryId) || !previous) return;
      output[i] = withMemoryRelationsOf(memory, previous);
      if (memory.confidence !== previous.confidence) {
        changes.push({ memory: output[i], before: previous.confidence });
      }
    });
    if (changes.length === 0) continue;
    // This transaction's versions are newer than the committed ones.
    const fresh = new Map(output.filter(inScope).map((m) => [m.memoryId, m]));
    const related = await loadRelatedMemories(
      changes.map((c) => c.memory),
      async (wanted) => [
        ...wanted.flatMap((id) => fresh.get(id) ?? []),
        ...(await memoriesWithIds(
          scope,
          wanted.filter((id) => !fresh.has(id)),
        )),
      ],
    );
    propagated.push(...propagateConfidenceChanges(changes, related));
  }
  return [...output, ...propagated];
}

/** The new version with the relations to other memories its committed version had and it lacks. */
function withMemoryRelationsOf(memory: Memory, previous: Memory): Memory {
  const has = (r: MemoryRelation) =>
    (memory.relations ?? []).some(
      (own) => own.targetMemoryId === r.targetMemoryId && own.relationType === r.relationType,
    );
  const kept = (previous.relations ?? []).filter((r) => r.targetMemoryId !== null && !has(r));
  return kept.length === 0
    ? memory
    : { ...memory, relations: [...(memory.relations ?? []), ...kept] };
}

function scopesOf(memories: readonly Memory[]): { tenantId: string; projectId: string }[] {
  const scopes = new Map<string, { tenantId: string; projectId: string }>();
  for (const { tenantId, projectId } of memories) {
    scopes.set(JSON.stringify([tenantId, projectId]), { tenantId, projectId });
  }
  return [...scopes.values()];
}
