// Test support (not part of the CLI): replays the friction contract's data
// (libs/core/src/ports/testing/friction-source.contract.ts) into the stores a friction source
// reads, through the project's own writers — the retrieval indexer for user turns, memories and
// tool calls, the store's access write-back for recalls — so a contract run on either mode reads
// what the services would have written.
import type { Memory } from '@engram/contracts';
import type { AccessUpdate, Delivered, RecallStoreWriter } from '@engram/core';
import { contractEmbedder } from '../../../../libs/core/src/ports/testing/recall-store.contract';
import type {
  ContractAccess,
  ContractMemory,
  FrictionContractData,
} from '../../../../libs/core/src/ports/testing/friction-source.contract';
import { RetrievalIndexer, type ToolCallIndex } from '@engram/app-retrieval';
import { memoryRecord } from '@engram/app-retrieval/testing';

/** Events as a consumer delivers them: one partition, consecutive offsets. */
function delivered<E>(events: readonly E[], topic: string): Delivered<E>[] {
  return events.map((event, i) => ({
    event,
    topic,
    partition: 0,
    offset: String(i),
    key: null,
    headers: {},
  }));
}

/** A contract memory as the distiller publishes it (the fields the contract leaves free, fixed). */
export function contractMemoryRecord(memory: ContractMemory): Memory {
  return memoryRecord({
    ...memory,
    memoryType: 'gotcha',
    sessionId: memory.provenanceSessionIds[0] ?? 'session-0',
    timestamp: memory.lastAccessedAt,
    createdAt: memory.lastAccessedAt,
  });
}

/** A recall's write-back of what it returned. */
export function contractAccessUpdate(access: ContractAccess): AccessUpdate {
  return { ...access, firstRecordedAt: access.lastAccessedAt };
}

/**
 * User turns, memories and tool calls (when there is a tool-call index) through the retrieval
 * indexer (the contract's concept embedder), then the memories' accesses through the store's
 * write-back.
 */
export async function indexFrictionData(
  data: FrictionContractData,
  writer: RecallStoreWriter,
  writeAccess: (updates: AccessUpdate[]) => Promise<{ failed: AccessUpdate[] }>,
  toolCalls: ToolCallIndex | null = null,
): Promise<void> {
  const indexer = new RetrievalIndexer(contractEmbedder(), writer, null, toolCalls);
  await indexer.handlePrompts(delivered(data.prompts, 'agent.prompts.v1'));
  await indexer.handleToolCalls(delivered(data.toolCalls, 'agent.tool-calls.v1'));
  await indexer.handleMemories(delivered(data.memories.map(contractMemoryRecord), 'memories'));
  const { failed } = await writeAccess(data.accesses.map(contractAccessUpdate));
  if (failed.length > 0) throw new Error(`access write-back failed for ${failed.length} memories`);
}
