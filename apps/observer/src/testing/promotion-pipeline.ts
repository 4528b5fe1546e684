// Both observer stages in process, with changelogs a commit writes as Kafka would (test support).
import type { Embedder } from '@engram/ai';
import type { LifecycleEvent, Memory, Typed } from '@engram/contracts';
import { memoriesByFileOn, observerSettings } from '@engram/core';
import {
  contractAvroOptions,
  contractCodec,
  type AnyStageOutput,
  type Delivered,
  type StageOutput,
} from '@engram/kafka';
import type { ObserverGraphBatch } from '@engram/core';
import { Type, type Schema } from 'avsc';
import { expect } from 'vitest';
import { DEFAULT_OBSERVER_TOPICS, ObserverStage } from '../observer.stage';
import { ProjectPromotionStage } from '../project-promotion.stage';
import type { ProjectWork } from '../project-work';

/** The memories of an output, each checked against the topic's Avro schema as Kafka would. */
export function validMemories(output: StageOutput<Typed<'Memory'>>): Memory[] {
  const type = Type.forSchema(output.codec.schema as Schema, contractAvroOptions());
  for (const memory of output.events) {
    const errors: string[] = [];
    type.isValid(output.codec.toAvro(memory), {
      errorHook: (path) => errors.push(path.join('.')),
    });
    expect(errors, `invalid Avro fields of ${memory.memoryId}`).toEqual([]);
  }
  return output.events;
}

/**
 * Both stages in process, each with a changelog map that a commit writes, as Kafka would.
 * `files`: both stages read the memories' latest versions (commits and FileManifests revise them).
 * `embedder`: the project stage's novelty check compares the drafts' vectors.
 */
export function pipeline(
  options: { files?: boolean; embedder?: Pick<Embedder, 'id' | 'embed'> } = {},
) {
  const settings = observerSettings();
  /** The memory topic as compaction leaves it: each memory's latest version, tombstones applied. */
  const latest = new Map<string, Memory>();
  const memoryIndex = options.files
    ? memoriesByFileOn({ refresh: () => Promise.resolve(), values: () => [...latest.values()] })
    : undefined;
  /** The tool-calls topic's end offset (0: lifecycle events never wait for tool calls). */
  const toolCalls = { end: 0 };
  const sessionLog = new Map<string, Buffer>();
  const projectLog = new Map<string, Buffer>();
  const graph: ObserverGraphBatch[] = [];
  const observer = new ObserverStage(DEFAULT_OBSERVER_TOPICS, {
    settings,
    restore: () => Promise.resolve(new Map(sessionLog)),
    writer: {
      write: (batch) => {
        graph.push(structuredClone(batch));
        return Promise.resolve();
      },
    },
    positions: {
      endOffset: () => Promise.resolve(toolCalls.end),
      committedOffsets: (partitions) => Promise.resolve(new Map(partitions.map((p) => [p, 0]))),
    },
    redact: (text) => text,
    ...(memoryIndex && { memoriesWithFiles: memoryIndex }),
  });
  const promotion = new ProjectPromotionStage({
    settings,
    stateTopic: DEFAULT_OBSERVER_TOPICS.projectState,
    memories: contractCodec('memory.memories.v1'),
    restore: () => Promise.resolve(new Map(projectLog)),
    ...(memoryIndex && { memoriesByFile: memoryIndex }),
    ...(options.embedder && { embedder: options.embedder }),
  });
  const work: ProjectWork[] = [];
  const memories: Memory[] = [];
  let offset = 0;
  const delivered = <E>(events: E[]): Delivered<E>[] =>
    events.map((event) => ({
      event,
      topic: 'in',
      partition: 0,
      offset: String(offset++),
      key: null,
      headers: {},
    }));
  const commitTo = (log: Map<string, Buffer>, outputs: AnyStageOutput[]) => {
    for (const output of outputs) {
      if ('messages' in output && output.topic === DEFAULT_OBSERVER_TOPICS.memories) {
        for (const m of output.messages) latest.delete(String(m.key));
      } else if ('messages' in output) {
        for (const m of output.messages) {
          if (m.value === null) log.delete(String(m.key));
          else log.set(String(m.key), m.value as Buffer);
        }
      } else if (output.codec.topic === DEFAULT_OBSERVER_TOPICS.projectWork) {
        work.push(...(output.events as ProjectWork[]));
      } else {
        const written = validMemories(output as StageOutput<Typed<'Memory'>>);
        memories.push(...written);
        for (const memory of written) latest.set(memory.memoryId, memory);
      }
    }
  };
  return {
    observer,
    promotion,
    sessionLog,
    toolCalls,
    projectLog,
    graph,
    work,
    memories,
    latest,
    delivered,
    async calls(events: Typed<'ToolCallObserved'>[]) {
      commitTo(sessionLog, await observer.toolCallStage.transform(delivered(events)));
      observer.committed();
    },
    async lifecycle(events: LifecycleEvent[]) {
      commitTo(sessionLog, await observer.lifecycleStage.transform(delivered(events)));
      observer.committed();
    },
    /** Runs the project stage on the work handed over so far. */
    async promote() {
      const pending = work.splice(0);
      if (pending.length === 0) return;
      commitTo(projectLog, await promotion.transform(delivered(pending)));
      promotion.onCommitted();
    },
  };
}
