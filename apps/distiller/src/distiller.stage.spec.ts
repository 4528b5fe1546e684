import { testDistillerSettings } from './testing/test-settings';
import type { Typed } from '@engram/contracts';
import {
  DownstreamUnavailableError,
  type Distillation,
  type DistillationWindow,
} from '@engram/core';
import type { AnyStageOutput, Delivered } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { distillerCodecs } from './distiller-topics';
import { DEFAULT_DISTILLER_TOPICS, DistillerStage } from './distiller.stage';
import type { ReflectorWork } from './reflector/reflector-work';
import {
  compactedSession,
  debuggingSession,
  shortSession,
  type RecordedSession,
} from './testing/distiller-events';
import type { EpisodeNarrative } from './episode-summary.stage';
import { MemoryMergeStage } from './memory-merge.stage';
import { ExtractiveWindowDistiller, type WindowDistiller } from './window-distiller';

const TOPICS = DEFAULT_DISTILLER_TOPICS;
const SCOPE = { tenantId: 'acme', projectId: 'acme/api' };
const T0 = Date.UTC(2026, 1, 16, 9, 0);

type Input = 'prompts' | 'toolCalls' | 'lifecycle' | 'boundaries';

/**
 * The stage against an in-memory log: one partition, offsets per topic, a compacted changelog
 * (latest value per key), and the memories committed — the fact candidates through the merge
 * stage, as the distiller's own group consumes them. Each delivery is one transaction.
 */
class Harness {
  readonly changelog = new Map<string, Buffer>();
  readonly mergeChangelog = new Map<string, Buffer>();
  readonly memories: Typed<'Memory'>[] = [];
  readonly candidates: Typed<'Memory'>[] = [];
  readonly merge = new MemoryMergeStage({
    changelogTopic: TOPICS.memoryMergeChangelog,
    memories: distillerCodecs(TOPICS).memories,
    restore: () => Promise.resolve(new Map(this.mergeChangelog)),
  });
  readonly narratives: EpisodeNarrative[] = [];
  readonly reflectorWork: ReflectorWork[] = [];
  readonly tombstones: string[] = [];
  readonly published: Record<Input, number> = {
    prompts: 0,
    toolCalls: 0,
    lifecycle: 0,
    boundaries: 0,
  };
  consumed = { prompts: 0, toolCalls: 0, boundaries: 0 };
  stage: DistillerStage;

  now = Date.UTC(2026, 10, 23, 12, 0);

  constructor(private distiller: WindowDistiller = new ExtractiveWindowDistiller()) {
    this.stage = this.newStage();
  }

  /** A new instance on the same changelog (a restart). */
  restart(distiller: WindowDistiller = this.distiller): void {
    this.distiller = distiller;
    this.stage = this.newStage();
  }

  private newStage(): DistillerStage {
    return new DistillerStage(TOPICS, distillerCodecs(TOPICS), {
      settings: testDistillerSettings(),
      restore: () => Promise.resolve(new Map(this.changelog)),
      positions: {
        endOffsets: () =>
          Promise.resolve({
            prompts: this.published.prompts,
            toolCalls: this.published.toolCalls,
            boundaries: this.published.boundaries,
          }),
        committedOffsets: (partitions) =>
          Promise.resolve(new Map(partitions.map((p) => [p, { ...this.consumed }]))),
      },
      distiller: this.distiller,
      redact: (text) => text.replace(/sk-[a-z0-9]+/g, '[REDACTED:key]'),
      clock: () => this.now,
    });
  }

  /** Appends events to a topic (as an agent or the segmenter would) and returns them delivered. */
  append<E>(input: Input, events: E[]): Delivered<E>[] {
    return events.map((event) => ({
      event,
      topic: TOPICS[input],
      partition: 0,
      offset: String(this.published[input]++),
      key: null,
      headers: undefined,
    }));
  }

  async deliver<E>(input: Input, items: Delivered<E>[]): Promise<void> {
    if (items.length === 0) return;
    const stage = {
      prompts: this.stage.promptStage,
      toolCalls: this.stage.toolCallStage,
      lifecycle: this.stage.lifecycleStage,
      boundaries: this.stage.boundaryStage,
    }[input] as { transform(items: Delivered<E>[]): Promise<AnyStageOutput[]> };
    let outputs: AnyStageOutput[];
    try {
      outputs = await stage.transform(items);
    } catch (error) {
      this.stage.aborted();
      throw error;
    }
    await this.commit(outputs);
    if (input !== 'lifecycle') {
      this.consumed[input] = Number(items[items.length - 1].offset) + 1;
    }
  }

  async publish(session: RecordedSession): Promise<void> {
    await this.deliver('prompts', this.append('prompts', session.prompts));
    await this.deliver('toolCalls', this.append('toolCalls', session.toolCalls));
    await this.deliver('boundaries', this.append('boundaries', session.boundaries));
    await this.deliver('lifecycle', this.append('lifecycle', session.lifecycle));
  }

  async sweep(): Promise<void> {
    await this.commit(await this.stage.sweep());
  }

  private async commit(outputs: AnyStageOutput[]): Promise<void> {
    const candidates: Typed<'Memory'>[] = [];
    for (const output of outputs) {
      if ('messages' in output) {
        for (const message of output.messages) {
          const key = String(message.key);
          if (message.value === null) {
            this.changelog.delete(key);
            this.tombstones.push(key);
          } else this.changelog.set(key, message.value as Buffer);
        }
      } else if (output.codec.topic === TOPICS.memories) {
        this.memories.push(...(output.events as Typed<'Memory'>[]));
      } else if (output.codec.topic === TOPICS.memoryCandidates) {
        candidates.push(...(output.events as Typed<'Memory'>[]));
      } else if (output.codec.topic === TOPICS.reflector) {
        this.reflectorWork.push(...(output.events as ReflectorWork[]));
      } else {
        this.narratives.push(...(output.events as EpisodeNarrative[]));
      }
    }
    this.stage.committed();
    this.candidates.push(...candidates);
    if (candidates.length > 0) await this.joinCandidates(candidates);
  }

  /** The merge stage's transaction on the candidates just committed. */
  private async joinCandidates(candidates: Typed<'Memory'>[]): Promise<void> {
    const items = candidates.map((event, i) => ({
      event,
      topic: TOPICS.memoryCandidates,
      partition: 0,
      offset: String(i),
      key: event.memoryId,
      headers: undefined,
    }));
    for (const output of await this.merge.candidateStage.transform(items)) {
      if ('messages' in output) {
        for (const { key, value } of output.messages) {
          this.mergeChangelog.set(String(key), value as Buffer);
        }
      } else this.memories.push(...(output.events as Typed<'Memory'>[]));
    }
    this.merge.candidateStage.onCommitted?.();
  }
}

function triggersOf(memories: readonly Typed<'Memory'>[]): Set<string> {
  return new Set(memories.flatMap((m) => m.tags.filter((t) => t.startsWith('trigger:'))));
}

describe('DistillerStage', () => {
  it('should distil every episode close and the session end into provenanced memories', async () => {
    const harness = new Harness();
    const session = debuggingSession('s-debug', T0, SCOPE);
    await harness.publish(session);

    const { counters } = harness.stage;
    // Three episode closes and the end (seven user messages).
    expect(counters.distilled).toBe(4);
    // Every window's version of a fact is a candidate; the merge joins them: a fact the session
    // end learnt again names both windows (issue #19), and is written once per change.
    expect(triggersOf(harness.candidates)).toEqual(
      new Set(['trigger:EpisodeClosed', 'trigger:SessionEnded']),
    );
    const final = new Map(harness.memories.map((m) => [m.memoryId, m]));
    const relearnt = [...final.values()].filter(
      (m) => m.memoryType !== 'work_state' && m.tags.includes('trigger:SessionEnded'),
    );
    expect(relearnt.length).toBeGreaterThan(0);
    for (const memory of relearnt) expect(memory.tags).toContain('trigger:EpisodeClosed');
    const contents = harness.memories.map((m) => `${m.memoryType} ${m.content}`);
    expect(contents.join('\n')).toMatch(/axios-retry/);
    expect(contents.join('\n')).toMatch(/no-file-parallelism/);
    // The session ended and its last episode is closed: its state left the changelog.
    expect(harness.tombstones).toContain('session:s-debug');
    expect(harness.stage.openSessions).toBe(0);
    expect([...harness.changelog.keys()].filter((k) => k.startsWith('distilled:'))).toHaveLength(4);
    // Each closed episode's narrative, keyed by its episode, for the episode's summary.
    const closes = session.boundaries.filter((b) => b.type === 'EpisodeClosed');
    expect(harness.narratives.map((n) => n.episodeId)).toEqual(closes.map((c) => c.episodeId));
    expect(harness.narratives[0].summary).toMatch(/refresh/);
    // Every distillation went to the project's reflector, in the same transaction.
    expect(harness.reflectorWork.map((w) => [w.kind, w.projectId])).toEqual(
      Array.from({ length: 4 }, () => ['distillation', 'acme/api']),
    );
  });

  it('should skip a prompt the segmenter dead-letters (oversize), so no memory comes from it', async () => {
    // Issue 19 finding 5: downstream stages skip what an upstream stage rejected. The user's
    // correction, padded past the segmenter's limit, became a gotcha from its first 2,000 chars.
    const session = debuggingSession('s-huge', T0, SCOPE);
    const prompts = session.prompts.map((prompt) =>
      prompt.text.includes('clock skew')
        ? { ...prompt, text: `${prompt.text} ${'pad '.repeat(30_000)}` }
        : prompt,
    );
    const harness = new Harness();
    await harness.deliver('prompts', harness.append('prompts', prompts));
    await harness.deliver('toolCalls', harness.append('toolCalls', session.toolCalls));
    await harness.deliver('boundaries', harness.append('boundaries', session.boundaries));
    await harness.deliver('lifecycle', harness.append('lifecycle', session.lifecycle));
    const contents = harness.memories.map((m) => m.content).join('\n');
    expect(contents).not.toMatch(/clock skew/);
    expect(harness.memories.length).toBeGreaterThan(0);
  });

  it('should produce nothing for a redelivered trigger, nor after a restart on the same changelog', async () => {
    const harness = new Harness();
    const session = debuggingSession('s-redeliver', T0, SCOPE);
    await harness.publish(session);
    const before = harness.memories.length;

    await harness.deliver('boundaries', harness.append('boundaries', session.boundaries));
    await harness.deliver('lifecycle', harness.append('lifecycle', session.lifecycle));
    expect(harness.memories).toHaveLength(before);

    harness.restart();
    harness.consumed = { prompts: 0, toolCalls: 0, boundaries: 0 };
    await harness.publish(session);
    expect(harness.memories).toHaveLength(before);
    expect(harness.stage.counters.duplicates).toBe(4);
  });

  it('should wait for the tool calls of a trigger read before them', async () => {
    const harness = new Harness();
    const session = shortSession('s-wait', T0, SCOPE);
    const prompts = harness.append('prompts', session.prompts);
    const toolCalls = harness.append('toolCalls', session.toolCalls);
    await harness.deliver('prompts', prompts);
    await harness.deliver('boundaries', harness.append('boundaries', session.boundaries));
    await harness.deliver('lifecycle', harness.append('lifecycle', session.lifecycle));
    expect(harness.stage.pendingTriggers).toBe(2);
    expect(harness.memories).toHaveLength(0);

    await harness.deliver('toolCalls', toolCalls);
    expect(harness.stage.pendingTriggers).toBe(0);
    // The episode is distilled; the end is not: one user message only.
    expect(harness.stage.counters.distilled).toBe(1);
    expect(harness.stage.counters.skipped).toBe(1);
    const text = harness.memories.map((m) => m.content).join('\n');
    expect(text).toMatch(/tsc --noEmit/);
  });

  it('should distil a compaction and the later end of one session separately', async () => {
    const harness = new Harness();
    await harness.publish(compactedSession('s-compact', T0, SCOPE));
    expect(harness.stage.counters.distilled).toBe(3);
    // The end's facts are the last episode's too: each written once, in its canonical version.
    expect(triggersOf(harness.memories)).toContain('trigger:CompactionPending');
    const work = harness.memories.filter((m) => m.memoryType === 'work_state');
    expect(work.length).toBeGreaterThan(0);
  });

  it('should end with the same memories whether the episode close or the session end comes first', async () => {
    const finalVersions = async (lifecycleFirst: boolean) => {
      const harness = new Harness();
      const session = debuggingSession('s-order', T0, SCOPE);
      await harness.deliver('prompts', harness.append('prompts', session.prompts));
      await harness.deliver('toolCalls', harness.append('toolCalls', session.toolCalls));
      const boundaries = () =>
        harness.deliver('boundaries', harness.append('boundaries', session.boundaries));
      const lifecycle = () =>
        harness.deliver('lifecycle', harness.append('lifecycle', session.lifecycle));
      for (const deliver of lifecycleFirst ? [lifecycle, boundaries] : [boundaries, lifecycle]) {
        await deliver();
      }
      await harness.sweep();
      // The compacted memory topic keeps each id's last write.
      return new Map(harness.memories.map((m) => [m.memoryId, m]));
    };
    const boundariesFirst = await finalVersions(false);
    expect(boundariesFirst.size).toBeGreaterThan(0);
    expect(await finalVersions(true)).toEqual(boundariesFirst);
  });

  it('should retry a window through an LLM outage and skip nothing', async () => {
    let down = 2;
    const extractive = new ExtractiveWindowDistiller();
    const flaky: WindowDistiller = {
      method: 'llm',
      distill(window: DistillationWindow): Promise<Distillation> {
        if (down > 0) {
          down -= 1;
          return Promise.reject(new DownstreamUnavailableError('LLM down (503)'));
        }
        return extractive.distill(window);
      },
    };
    const harness = new Harness(flaky);
    const session = shortSession('s-outage', T0, SCOPE);
    await harness.deliver('prompts', harness.append('prompts', session.prompts));
    await harness.deliver('toolCalls', harness.append('toolCalls', session.toolCalls));
    const boundaries = harness.append('boundaries', session.boundaries);
    await expect(harness.deliver('boundaries', boundaries)).rejects.toThrow(/LLM down/);
    await expect(harness.deliver('boundaries', boundaries)).rejects.toThrow(/LLM down/);
    await harness.deliver('boundaries', boundaries);
    expect(harness.stage.counters.distilled).toBe(1);
    expect(harness.memories.length).toBeGreaterThan(0);
  });

  it('should drop an ended session after the grace when no final close comes', async () => {
    const harness = new Harness();
    const session = shortSession('s-grace', T0, SCOPE);
    // No boundaries at all (no segmenter): the end is the only trigger.
    await harness.deliver('prompts', harness.append('prompts', session.prompts));
    await harness.deliver('toolCalls', harness.append('toolCalls', session.toolCalls));
    await harness.deliver('lifecycle', harness.append('lifecycle', session.lifecycle));
    await harness.sweep();
    expect(harness.stage.openSessions).toBe(1);
    // Ten minutes of processing time later, no close has come: the session goes.
    harness.now += 10 * 60_000;
    await harness.sweep();
    expect(harness.tombstones).toContain('session:s-grace');
    expect(harness.stage.openSessions).toBe(0);
  });

  it('should keep every session of a backlog spanning days until its triggers come', async () => {
    const harness = new Harness();
    const days = [0, 2, 5].map((day) =>
      debuggingSession(`s-day${day}`, T0 + day * 86_400_000, SCOPE),
    );
    // A week of prompts and tool calls read in one go, the triggers after.
    await harness.deliver(
      'prompts',
      harness.append(
        'prompts',
        days.flatMap((s) => s.prompts),
      ),
    );
    await harness.deliver(
      'toolCalls',
      harness.append(
        'toolCalls',
        days.flatMap((s) => s.toolCalls),
      ),
    );
    expect(harness.stage.openSessions).toBe(3);
    await harness.deliver(
      'boundaries',
      harness.append(
        'boundaries',
        days.flatMap((s) => s.boundaries),
      ),
    );
    await harness.deliver(
      'lifecycle',
      harness.append(
        'lifecycle',
        days.flatMap((s) => s.lifecycle),
      ),
    );
    expect(harness.stage.counters.skipped).toBe(0);
    expect(harness.stage.counters.distilled).toBe(12);
    expect(harness.stage.openSessions).toBe(0);
  });
});
