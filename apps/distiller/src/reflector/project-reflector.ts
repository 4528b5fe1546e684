import { LlmServiceError, LlmTokenBudgetError, type LlmClient } from '@engram/ai';
import {
  applyTemporalGradient,
  buildReflectorPrompt,
  errorMessage,
  evaluateReflectorAttempt,
  promotedMemory,
  reflectExtractively,
  renderMemoryMd,
  type CompressionLevel,
  type ReflectionInput,
  type ReflectionResult,
  type ReviewProposal,
} from '@engram/core';
import { Logger } from '@nestjs/common';

/** How a reflection went, for logs and counters. */
export interface ProjectReflection extends ReflectionResult {
  method: 'llm' | 'extractive';
  /** LLM attempts (compression retries included); 0 for the extractive reflector. */
  attempts: number;
  /** Why an LLM reflection fell back to the extractive one, or null. */
  fallback: string | null;
}

/** Condenses a project's distillations into proposals; the reflector stage depends on this only. */
export interface ProjectReflector {
  readonly method: 'llm' | 'extractive';
  reflect(input: ReflectionInput): Promise<ProjectReflection>;
}

/** Without an LLM (the default): seed 001's rules applied extractively, deterministic. */
export class ExtractiveProjectReflector implements ProjectReflector {
  readonly method = 'extractive';

  reflect(input: ReflectionInput): Promise<ProjectReflection> {
    return Promise.resolve({
      ...reflectExtractively(input),
      method: 'extractive',
      attempts: 0,
      fallback: null,
    });
  }
}

export interface LlmReflectorOptions {
  /**
   * Token budget of the prompt (default 12,000, inside the chat client's default 16,000; the
   * oldest distillations are left out of the prompt first).
   */
  maxPromptTokens?: number;
  /** Completion tokens asked for (default 4,096). */
  maxCompletionTokens?: number;
}

/**
 * The reflector with an LLM (seed 001): the prompt holds the current MEMORY.md and the graded
 * distillations; an answer not shorter than its input is asked again with the next guidance
 * level (0 → 1 → 2), after which — or when the answer holds nothing usable, or the service
 * refuses the request for good — the extractive reflector stands in. An outage (the client's
 * DownstreamUnavailableError) is thrown on: the transaction aborts and is retried later, so a
 * reflection is never skipped.
 */
export class LlmProjectReflector implements ProjectReflector {
  readonly method = 'llm';
  private readonly logger = new Logger(LlmProjectReflector.name);

  constructor(
    private readonly client: LlmClient,
    private readonly options: LlmReflectorOptions = {},
  ) {}

  async reflect(input: ReflectionInput): Promise<ProjectReflection> {
    const graded = applyTemporalGradient(input.distillations, input.now, input.gradientAgeDays);
    const memoryMd = curatedMemoryMd(input);
    let level: CompressionLevel = 0;
    for (let attempts = 1; ; attempts += 1) {
      const prompt = buildReflectorPrompt(graded, {
        level,
        memoryMd,
        maxPromptTokens: this.options.maxPromptTokens ?? 12_000,
      });
      let text: string;
      try {
        const completion = await this.client.complete({
          messages: [
            { role: 'system', content: prompt.system },
            { role: 'user', content: prompt.user },
          ],
          maxTokens: this.options.maxCompletionTokens ?? 4_096,
        });
        text = completion.text;
      } catch (error) {
        if (!(error instanceof LlmServiceError || error instanceof LlmTokenBudgetError)) {
          throw error;
        }
        const reason = `${this.client.id} refused the reflection: ${errorMessage(error)}`;
        this.logger.warn(`${input.projectId}: ${reason}; reflected extractively`);
        return { ...reflectExtractively(input), method: 'extractive', attempts, fallback: reason };
      }
      const attempt = evaluateReflectorAttempt(
        text,
        { level, inputTokens: prompt.inputTokens },
        input,
      );
      if (attempt.kind === 'retry') {
        level = attempt.level;
        continue;
      }
      if (attempt.kind === 'fallback') {
        this.logger.warn(`${input.projectId}: ${attempt.reason}; reflected extractively`);
        return { ...attempt.result, method: 'extractive', attempts, fallback: attempt.reason };
      }
      return { ...attempt.result, method: 'llm', attempts, fallback: null };
    }
  }
}

/** The project's approved proposals as the MEMORY.md the prompt shows (nothing proposed twice). */
function curatedMemoryMd(input: ReflectionInput): string {
  const approved = (input.existingProposals ?? []).filter(
    (p): p is ReviewProposal => 'status' in p && p.status === 'approved',
  );
  if (approved.length === 0) return '';
  const memories = approved.map((p) => promotedMemory(p, p.decidedAt ?? p.createdAt, p.decidedBy));
  return renderMemoryMd(memories, { projectId: input.projectId });
}
