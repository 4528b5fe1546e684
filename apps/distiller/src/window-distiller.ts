import { LlmServiceError, LlmTokenBudgetError, type LlmClient } from '@engram/ai';
import {
  buildDistillationPrompt,
  distillationFromLlmOutput,
  distillExtractively,
  errorMessage,
  type Distillation,
  type DistillationMethod,
  type DistillationWindow,
} from '@engram/core';
import { Logger } from '@nestjs/common';

/** Distils one trigger's window; the stage depends on this only. */
export interface WindowDistiller {
  readonly method: DistillationMethod;
  distill(window: DistillationWindow): Promise<Distillation>;
}

/** The default on a laptop: the deterministic extractive distiller of libs/core. */
export class ExtractiveWindowDistiller implements WindowDistiller {
  readonly method = 'extractive';

  distill(window: DistillationWindow): Promise<Distillation> {
    return Promise.resolve(distillExtractively(window));
  }
}

export interface LlmDistillerOptions {
  /** Token budget of the prompt, system prompt included (default: the core's 12,000). */
  maxPromptTokens?: number;
  /** Completion tokens asked for (default 2,048). */
  maxCompletionTokens?: number;
}

/**
 * Segment-aware distillation with an LLM (seed 001's prompt for coding sessions). An outage (the
 * client's DownstreamUnavailableError after its own retries) is thrown on: the transaction aborts
 * and the processor pauses the partition and retries — a window is never skipped. A request the
 * service refuses for good (4xx, over budget) cannot succeed on retry: that window is distilled
 * extractively instead, as is one whose answer holds nothing usable.
 */
export class LlmWindowDistiller implements WindowDistiller {
  readonly method = 'llm';
  private readonly logger = new Logger(LlmWindowDistiller.name);
  readonly counters = { calls: 0, fallbacks: 0, refused: 0 };

  constructor(
    private readonly client: LlmClient,
    private readonly options: LlmDistillerOptions = {},
  ) {}

  async distill(window: DistillationWindow): Promise<Distillation> {
    const prompt = buildDistillationPrompt(
      window,
      this.options.maxPromptTokens === undefined
        ? {}
        : { maxPromptTokens: this.options.maxPromptTokens },
    );
    let text: string;
    try {
      this.counters.calls += 1;
      const completion = await this.client.complete({
        messages: [
          { role: 'system', content: prompt.system },
          { role: 'user', content: prompt.user },
        ],
        maxTokens: this.options.maxCompletionTokens ?? 2_048,
      });
      text = completion.text;
    } catch (error) {
      if (!(error instanceof LlmServiceError || error instanceof LlmTokenBudgetError)) throw error;
      this.counters.refused += 1;
      this.logger.warn(
        `${this.client.id} refused the ${window.trigger} window of ${window.sessionId}; distilled extractively: ${errorMessage(error)}`,
      );
      return distillExtractively(window);
    }
    const result = distillationFromLlmOutput(text, window);
    if (result.fellBack) this.counters.fallbacks += 1;
    return result.distillation;
  }
}
