import type { EpochMillis, EventEnvelope } from './envelope';

/**
 * `memory.thread-links.v1` (compacted, key decisionId): one cross-thread linking decision
 * (SPEC §4.3, seed 004 §2.3–2.4) with the algorithmic components and the LLM's answer, so the
 * threshold can be tuned from recorded outcomes.
 */
export interface ThreadLinkDecision extends EventEnvelope {
  decisionId: string;
  newThreadId: string;
  candidateThreadId: string;
  newEpisodeId: string;
  linkedEpisodeId: string | null;
  decision: 'LINK' | 'NO_LINK';
  uncertain: boolean;
  decidedBy: 'agreement' | 'algorithmic' | 'llm';
  score: number;
  threshold: number;
  algorithmicConfidence: number;
  keywordScore: number;
  entityScore: number;
  topicScore: number;
  recencyScore: number;
  topicMeasure: string;
  hoursSinceActivity: number;
  llmStatus: string;
  llmRelated: boolean | null;
  llmConfidence: number | null;
  llmReasoning: string | null;
  outcome: 'CORRECT' | 'INCORRECT' | null;
  outcomeAt: EpochMillis | null;
}
