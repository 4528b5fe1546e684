import type { LifecycleEvent, PromptSubmitted, ToolCallObserved, Typed } from '@engram/contracts';
import type { SegmenterOutput, StreamSegmenter } from '@engram/core';
import type { Delivered } from '@engram/core';
import type { SegmenterState } from './segmenter-state';
import type { EmbedTexts, InputOffsets, Redactor } from './segmenter-stage-types';
import type { ThreadLinker } from './thread-linker';

// The evidence kept for annotation is bounded, so one session's changelog record stays far below
// the broker's 1 MB record limit whatever the agent does.
const MAX_ERROR_CHARS = 500;
const MAX_PROMPT_CHARS = 2_000;
const MAX_TOOL_CALLS = 1_000;

/**
 * What each input event does: prompts move boundaries (and, from a user, cross-thread links),
 * tool calls and validations are kept as evidence for the annotation at close, SessionEnded waits
 * for the session's prompts and tool calls.
 */
export class SegmenterEventHandler {
  constructor(
    private readonly state: SegmenterState,
    private readonly segmenter: StreamSegmenter,
    private readonly linker: ThreadLinker,
    private readonly redact: Redactor,
    private readonly embed: EmbedTexts | undefined,
  ) {}

  /** Hybrid mode: one batched embedding call for the batch's user prompts (redacted). */
  async embeddingsOf(items: Delivered<Typed<'PromptSubmitted'>>[]): Promise<Map<string, number[]>> {
    const embeddings = new Map<string, number[]>();
    if (!this.embed) return embeddings;
    const prompts = items.map((item) => item.event).filter((p) => p.source === 'user');
    const vectors = await this.embed(prompts.map((p) => this.redact(p.text)));
    prompts.forEach((p, i) => embeddings.set(p.eventId, vectors[i]));
    return embeddings;
  }

  onPrompt(
    item: Delivered<Typed<'PromptSubmitted'>>,
    outputs: SegmenterOutput[],
    embedding: number[] | null = null,
  ): void | Promise<void> {
    const prompt: PromptSubmitted = { ...item.event, text: this.redact(item.event.text) };
    const result = this.segmenter.push(prompt, embedding);
    if (result.decision.rule === 'duplicate') return;
    this.state.evidenceOf(prompt.sessionId, item.partition).prompts.push({
      eventId: prompt.eventId,
      promptId: prompt.promptId,
      source: prompt.source,
      text: prompt.text.slice(0, MAX_PROMPT_CHARS),
      timestamp: prompt.timestamp,
      agentId: prompt.agentId,
      userId: prompt.userId,
      methodology: prompt.methodology,
      methodologyPhase: prompt.methodologyPhase,
    });
    outputs.push(...result.outputs);
    if (prompt.source === 'user') return this.noteThreadActivity(prompt, result.outputs);
  }

  /** A user turn: cross-thread linking decisions and outcomes (seed 004 §2.3–2.4). */
  private noteThreadActivity(
    prompt: PromptSubmitted,
    outputs: SegmenterOutput[],
  ): void | Promise<void> {
    const state = this.segmenter.state(prompt.sessionId);
    const evidence = this.state.evidence.get(prompt.sessionId);
    if (!state?.thread || !state.episode || !evidence) return;
    const threadId = state.thread.threadId;
    const opened = outputs.find((o) => o.kind === 'opened' && o.episode.threadId === threadId);
    const records = this.linker.onUserTurn(
      prompt,
      threadId,
      state.episode.episodeId,
      opened?.episode ?? null,
      evidence,
      evidence.partition,
    );
    if (!(records instanceof Promise)) {
      this.state.linkRecords.push(...records);
      return;
    }
    return records.then((decided) => {
      this.state.linkRecords.push(...decided);
    });
  }

  onToolCall(item: Delivered<Typed<'ToolCallObserved'>>): void {
    const call: ToolCallObserved = item.event;
    const evidence = this.state.evidenceOf(call.sessionId, item.partition);
    if (evidence.toolCalls.some((known) => known.eventId === call.eventId)) return;
    evidence.toolCalls.push({
      eventId: call.eventId,
      promptId: call.promptId,
      stepIndex: call.stepIndex,
      toolName: call.toolName,
      filePaths: call.filePaths,
      command: call.command === null ? null : this.redact(call.command),
      outcome: call.outcome,
      errorMessage:
        call.errorMessage === null
          ? null
          : this.redact(call.errorMessage).slice(0, MAX_ERROR_CHARS),
      timestamp: call.timestamp,
      agentId: call.agentId,
      userId: call.userId,
      mcp: call.mcp,
    });
    if (evidence.toolCalls.length > MAX_TOOL_CALLS) evidence.toolCalls.shift();
  }

  onLifecycle(item: Delivered<LifecycleEvent>, ends: Map<number, InputOffsets>): void {
    const event = item.event;
    if (event.type === 'SessionEnded') {
      const evidence = this.state.evidenceOf(event.sessionId, item.partition);
      evidence.pendingEnd = { at: event.timestamp, until: ends.get(item.partition)! };
    } else if (event.type === 'ValidationPassed' || event.type === 'ValidationFailed') {
      this.state.evidenceOf(event.sessionId, item.partition).validations.push({
        passed: event.type === 'ValidationPassed',
        timestamp: event.timestamp,
      });
    }
  }
}
