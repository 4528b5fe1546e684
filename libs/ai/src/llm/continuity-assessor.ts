import type {
  ContinuityAssessmentInput,
  LlmContinuityAssessment,
  LlmContinuityAssessor,
} from '@engram/core';
import type { LlmClient } from './llm-client';

/** The instruction of seed 004 §2.3 PATH B, for a coding agent's user threads. */
export const CONTINUITY_SYSTEM_PROMPT = [
  "You decide whether a developer's new message continues an earlier conversation thread with a",
  'coding agent. Assess if these are semantically related: the same task, bug, feature, file or',
  'decision, not merely the same programming language or tool.',
  'Answer with one JSON object and nothing else:',
  '{"related": true|false, "confidence": 0.0-1.0, "reasoning": "one sentence",',
  ' "key_signals": ["what made you decide", "..."]}',
].join('\n');

/**
 * The optional LLM half of cross-thread linking (seed 004 §2.3) on any OpenAI-compatible chat
 * model. The core's `decideCrossThreadLink` bounds it with a timeout and treats a rejection or a
 * malformed answer as "no LLM", so this class only asks and parses.
 */
export class LlmContinuityAssessorClient implements LlmContinuityAssessor {
  constructor(private readonly llm: LlmClient) {}

  async assess(
    input: ContinuityAssessmentInput,
    signal?: AbortSignal,
  ): Promise<LlmContinuityAssessment> {
    const completion = await this.llm.complete({
      messages: [
        { role: 'system', content: CONTINUITY_SYSTEM_PROMPT },
        { role: 'user', content: continuityQuestion(input) },
      ],
      maxTokens: 300,
      temperature: 0,
      ...(signal && { signal }),
    });
    return parseContinuityAnswer(completion.text);
  }
}

export function continuityQuestion(input: ContinuityAssessmentInput): string {
  const turns = input.previousTurns.map((turn) => `- ${turn}`).join('\n') || '- (none kept)';
  return [
    `Previous thread (last active ${input.hoursSincePreviousActivity.toFixed(1)} h ago)`,
    `Summary: ${input.previousSummary ?? '(none)'}`,
    'Last turns:',
    turns,
    '',
    `New message: ${input.currentMessage}`,
  ].join('\n');
}

/**
 * The model's JSON answer (inside a ```json fence or surrounded by prose too). Throws on anything
 * without a boolean `related` and a numeric `confidence`: the caller then decides without it.
 */
export function parseContinuityAnswer(text: string): LlmContinuityAssessment {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) throw new Error('continuity answer has no JSON object');
  const answer = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>;
  const { related, confidence, reasoning } = answer;
  const signals = answer.key_signals ?? answer.keySignals;
  if (typeof related !== 'boolean' || typeof confidence !== 'number') {
    throw new Error('continuity answer lacks a boolean "related" and a numeric "confidence"');
  }
  return {
    related,
    confidence,
    reasoning: typeof reasoning === 'string' ? reasoning : '',
    keySignals: Array.isArray(signals)
      ? signals.filter((s): s is string => typeof s === 'string')
      : [],
  };
}
