import type { Memory, Typed } from '@engram/contracts';
import {
  addPrompt,
  addToolCall,
  distillationToMemories,
  distillationWindow,
  distillExtractively,
  newDistillerSession,
  noteEpisodeClosed,
  noteEpisodeOpened,
  sessionEventsOf,
} from '@engram/core';
import type { AnyStageOutput, Delivered, RawStageOutput } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { distillerCodecs } from './distiller-topics';
import { DEFAULT_DISTILLER_TOPICS } from './distiller.stage';
import { MemoryMergeStage } from './memory-merge.stage';
import { debuggingSession } from './testing/distiller-events';

const TOPICS = DEFAULT_DISTILLER_TOPICS;
const CODECS = distillerCodecs(TOPICS);
const SCOPE = { tenantId: 'acme', projectId: 'acme/api' };

/** The fact memories the distiller makes of a recorded session's episodes (as bench distill). */
function factVersions(sessionId: string, start: number): Typed<'Memory'>[] {
  const recorded = debuggingSession(sessionId, start, SCOPE);
  const state = newDistillerSession({ sessionId, ...SCOPE });
  for (const prompt of recorded.prompts) addPrompt(state, prompt);
  for (const call of recorded.toolCalls) addToolCall(state, call);
  const memories: Memory[] = [];
  for (const boundary of recorded.boundaries) {
    if (boundary.type === 'EpisodeOpened') {
      noteEpisodeOpened(state, boundary);
      continue;
    }
    noteEpisodeClosed(state, boundary);
    const trigger = { kind: 'EpisodeClosed' as const, event: boundary };
    const decision = distillationWindow(trigger, sessionEventsOf(state));
    if (decision.kind === 'distill') {
      memories.push(...distillationToMemories(distillExtractively(decision.window)));
    }
  }
  return memories
    .filter((memory) => memory.memoryType !== 'work_state')
    .map((memory) => ({ type: 'Memory' as const, ...memory }));
}

/** A changelog that keeps what committed transactions wrote (the compacted topic's view). */
class Changelog {
  readonly records = new Map<string, Buffer>();
  restore = (): Promise<Map<string, Buffer>> => Promise.resolve(new Map(this.records));
  commit(outputs: AnyStageOutput[]): void {
    const raw = outputs.find((o): o is RawStageOutput => 'messages' in o)!;
    for (const { key, value } of raw.messages) this.records.set(String(key), value as Buffer);
  }
}

/** The merge stage on one partition, committing every batch (what the processor does). */
class Harness {
  readonly changelog = new Changelog();
  readonly memoryTopic = new Map<string, Memory>();
  written = 0;
  stage = this.newStage();
  private offset = 0;

  newStage(): MemoryMergeStage {
    return new MemoryMergeStage({
      changelogTopic: TOPICS.memoryMergeChangelog,
      memories: CODECS.memories,
      restore: this.changelog.restore,
    });
  }

  restart(): void {
    this.stage = this.newStage();
    this.stage.onAssignment([0]);
  }

  async deliver(candidates: Typed<'Memory'>[]): Promise<void> {
    const items: Delivered<Typed<'Memory'>>[] = candidates.map((event) => ({
      event,
      topic: TOPICS.memoryCandidates,
      partition: 0,
      offset: String(this.offset++),
      key: event.memoryId,
      headers: undefined,
    }));
    const outputs = await this.stage.candidateStage.transform(items);
    const memories = outputs.find((o) => 'codec' in o && o.codec.topic === TOPICS.memories);
    for (const memory of (memories as { events: Typed<'Memory'>[] }).events) {
      this.memoryTopic.set(memory.memoryId, memory);
      this.written += 1;
    }
    this.changelog.commit(outputs);
    this.stage.candidateStage.onCommitted?.();
  }
}

const sessionA = factVersions('s-a', Date.UTC(2026, 1, 16, 9));
const sessionB = factVersions('s-b', Date.UTC(2026, 1, 17, 9));

describe('MemoryMergeStage', () => {
  it('should end with the same memories whichever session is delivered first', async () => {
    const aFirst = new Harness();
    await aFirst.deliver(sessionA);
    await aFirst.deliver(sessionB);
    const bFirst = new Harness();
    await bFirst.deliver(sessionB);
    await bFirst.deliver(sessionA);

    expect(sessionA.length).toBeGreaterThan(0);
    expect(aFirst.memoryTopic).toEqual(bFirst.memoryTopic);
    for (const memory of aFirst.memoryTopic.values()) {
      // A fact seen in both sessions names both, and was first learnt in the earlier one.
      expect(memory.provenanceSessionIds).toEqual(['s-a', 's-b']);
      expect(memory.sessionId).toBe('s-a');
      expect(memory.createdAt).toBe(
        sessionA.find((m) => m.memoryId === memory.memoryId)!.createdAt,
      );
    }
  });

  it('should restore the joined state after a restart', async () => {
    const harness = new Harness();
    await harness.deliver(sessionA);
    harness.restart();
    await harness.deliver(sessionB);

    const uninterrupted = new Harness();
    await uninterrupted.deliver([...sessionA, ...sessionB]);
    expect(harness.memoryTopic).toEqual(uninterrupted.memoryTopic);
    expect(harness.stage.memories()).toHaveLength(sessionA.length);
  });

  it('should write nothing when a candidate is replayed', async () => {
    const harness = new Harness();
    await harness.deliver([...sessionA, ...sessionB]);
    const before = new Map(harness.memoryTopic);
    const written = harness.written;
    harness.restart();
    await harness.deliver([...sessionB, ...sessionA, ...sessionA]);

    expect(harness.written).toBe(written);
    expect(harness.memoryTopic).toEqual(before);
    expect(harness.stage.counters.unchanged).toBe(3 * sessionA.length);
  });

  it('should write one joined memory for two versions in one batch', async () => {
    const harness = new Harness();
    await harness.deliver([...sessionA, ...sessionB]);
    expect(harness.written).toBe(sessionA.length);
  });

  it('should forget uncommitted state when the transaction aborts', async () => {
    const harness = new Harness();
    await harness.deliver(sessionA);
    await harness.stage.candidateStage.transform(
      sessionB.map((event, i) => ({
        event,
        topic: TOPICS.memoryCandidates,
        partition: 0,
        offset: String(100 + i),
        key: event.memoryId,
        headers: undefined,
      })),
    );
    harness.stage.candidateStage.onAborted?.();
    await harness.deliver([]);
    for (const memory of harness.stage.memories()) {
      expect(memory.provenanceSessionIds).toEqual(['s-a']);
    }
  });
});
