import type { Memory, Typed } from '@engram/contracts';
import type { RecallClient } from './recall-rpc-client';
import { PROJECT } from './records';

// What the recall rpcs suite's cases share: the fixture a server mode provides, the client of
// its server, and the messages the cases read. Test support only.

export interface RecallRpcsFixture {
  /** host:port of a server with the corpus indexed, tokens RPC_TOKENS. */
  url: string;
  /** At least `count` records Remember published on a contract topic (read back from the log). */
  published(topic: 'agent.lifecycle.v1' | 'memory.memories.v1', count: number): Promise<Typed[]>;
  /** The keys of the tombstones Feedback published on memory.memories.v1, in no given order. */
  tombstones(topic: 'memory.memories.v1'): Promise<string[]>;
  /** Indexes a memory as the log's consumer does, searchable once it resolves (a validation). */
  indexMemory(memory: Memory): Promise<void>;
  close(): Promise<void>;
}

/** The suite's fixture and client, made in its `beforeAll`: read them inside a case only. */
export interface RecallRpcsContext {
  readonly fx: RecallRpcsFixture;
  readonly client: RecallClient;
}

export const SCOPE = { project_id: PROJECT };

export interface ScoredMemoryMessage {
  memory: { memory_id: string; type: string; stale: boolean };
  scores: { final_score: number } | null;
  provenance: { tenant_id: string; memory_id: string };
}

export interface EpisodeMessage {
  episode: { episode_id: string; started_at_ms: number; parent_episode_id: string };
  scores: { relevance: number } | null;
  provenance: { tenant_id: string; episode_ids: string[] };
}
