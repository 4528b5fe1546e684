/**
 * `engram neighbors` as the CLI answers it after `engram replay --wait`: the sessions' tool calls
 * go through the observer's own stage (apps/observer ObserverStage: the signal detector, the
 * per-session facts, the graph batches it commits) into the embedded SQLite graph (graph.db in a
 * data dir, the adapter `engram start` runs), and each query is `neighborsReport` — the function
 * behind `engram neighbors --json` — on that graph. One call per transaction, so a query asked
 * after a call sees exactly the calls replayed before it.
 */
import type { Typed } from '@engram/contracts';
import { observerSettings } from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import type { Delivered } from '@engram/kafka';
import {
  neighborsReport,
  type NeighborsReport,
} from '../../../../apps/engram/src/commands/neighbors.command';
import { prefixedObserverTopics } from '../../../../apps/observer/src/observer.topology';
import { ObserverStage } from '../../../../apps/observer/src/observer.stage';
import { toolCallEvents, type BenchCall, type BenchSession } from './sessions';

export interface ReplayHooks {
  /** After each call is observed (and its graph batch written). */
  afterCall(session: BenchSession, call: BenchCall, index: number): Promise<void>;
  /** Before a session's first call. */
  beforeSession(session: BenchSession): Promise<void>;
}

export class EngramFileGraph {
  readonly graph: SqliteObserverGraph;
  private readonly stage: ObserverStage;
  private offset = 0;

  constructor(dataDir: string) {
    const settings = observerSettings();
    this.graph = SqliteObserverGraph.open({ dataDir, rule: settings });
    this.stage = new ObserverStage(prefixedObserverTopics('bench.'), {
      settings,
      restore: () => Promise.resolve(new Map()),
      writer: this.graph,
      positions: {
        endOffset: () => Promise.resolve(0),
        committedOffsets: (partitions) => Promise.resolve(new Map(partitions.map((p) => [p, 0]))),
      },
      redact: (text) => text,
    });
  }

  async observe(event: Typed<'ToolCallObserved'>): Promise<void> {
    const item: Delivered<Typed<'ToolCallObserved'>> = {
      event,
      topic: 'bench.agent.tool-calls.v1',
      partition: 0,
      offset: String(this.offset),
      key: event.sessionId,
      headers: {},
    };
    this.offset += 1;
    await this.stage.toolCallStage.transform([item]);
    this.stage.committed();
  }

  neighbours(projectId: string, file: string, k: number): Promise<NeighborsReport> {
    return neighborsReport(this.graph, { project: projectId, file, k });
  }

  close(): void {
    this.graph.close();
  }
}

/** Replays the sessions in order through `graph`, calling the hooks around each call. */
export async function replaySessions(
  sessions: readonly BenchSession[],
  graph: EngramFileGraph,
  hooks: ReplayHooks,
): Promise<void> {
  for (const session of sessions) {
    await hooks.beforeSession(session);
    const events = toolCallEvents(session);
    for (let i = 0; i < events.length; i += 1) {
      await graph.observe(events[i]);
      await hooks.afterCall(session, session.calls[i], i);
    }
  }
}
