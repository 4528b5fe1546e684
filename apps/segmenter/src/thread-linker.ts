import type { PromptSubmitted, ThreadLinkDecision } from '@engram/contracts';
import {
  classifyOutcome,
  decideCrossThreadLink,
  decideCrossThreadLinkAlgorithmically,
  type CrossThreadCandidate,
  type CrossThreadDecisionResult,
  type LlmContinuityAssessor,
  intentKeywords,
  uuidV5,
  DEFAULT_CROSS_THREAD_OPTIONS,
  type ContinuityTopicMeasure,
  type EpisodeSnapshot,
  type LinkDecisionRecord,
  type LlmAssessmentStatus,
} from '@engram/core';
import { threadLinkRecord } from './episode-records';
import { RecentThreads } from './recent-threads';

export type ThreadLinkRecord = ThreadLinkDecision & { type: 'ThreadLinkDecision' };

/** A decision waiting for the follow-up prompt that shows whether it was right (seed 004 §2.4). */
export interface AwaitingOutcome {
  threadId: string;
  decision: ThreadLinkRecord;
  /** Intent keywords of the other thread's recent turns: the context the decision was about. */
  contextKeywords: string[];
}

/** What a session keeps about linking (it lives in the changelog with the session's evidence). */
export interface LinkEvidence {
  /** Open episodes linked to another thread's episode, by episodeId. */
  crossThread?: Record<string, string[]>;
  awaitingOutcome?: AwaitingOutcome | null;
}

const MAX_TURN_CHARS = 2_000;

/**
 * Cross-thread linking in the stream (SPEC §4.3, seed 004 §2.3–2.4): a user's new thread is
 * decided against their recent threads (algorithmically, and with the LLM assessor when one is
 * configured: then the batch waits for it, bounded by the core's timeout), a LINK marks the new
 * episode, and the next user prompt of the new thread that is evidence either
 * way records the decision's outcome (CORRECT / INCORRECT) by republishing it under its key.
 */
export class ThreadLinker {
  private readonly threads = new RecentThreads();

  constructor(private readonly assessor: LlmContinuityAssessor | null = null) {}

  /**
   * The records this user turn produces: an outcome, a new decision, both or none. Synchronous
   * unless a new thread is to be judged by the LLM too.
   */
  onUserTurn(
    prompt: PromptSubmitted,
    threadId: string,
    episodeId: string,
    opened: EpisodeSnapshot | null,
    evidence: LinkEvidence,
  ): ThreadLinkRecord[] | Promise<ThreadLinkRecord[]> {
    const records: ThreadLinkRecord[] = [];
    const outcome = this.outcomeOf(prompt, threadId, evidence);
    if (outcome) records.push(outcome);
    const finish = (decided: ThreadLinkRecord | null): ThreadLinkRecord[] => {
      if (decided) records.push(decided);
      this.recordTurn(prompt, threadId, episodeId);
      return records;
    };
    if (!opened || this.threads.has(threadId)) return finish(null);
    const candidates = this.threads.candidates(prompt.tenantId, prompt.userId, prompt.timestamp);
    const input = {
      opening: {
        threadId,
        tenantId: prompt.tenantId,
        userId: prompt.userId,
        openedAt: prompt.timestamp,
        text: prompt.text,
      },
      candidates,
    };
    const settle = (result: CrossThreadDecisionResult) =>
      finish(this.recordDecision(prompt, threadId, opened, candidates, result, evidence));
    if (!this.assessor) return settle(decideCrossThreadLinkAlgorithmically(input));
    return decideCrossThreadLink(input, this.assessor).then(settle);
  }

  private recordTurn(prompt: PromptSubmitted, threadId: string, episodeId: string): void {
    this.threads.record({
      threadId,
      tenantId: prompt.tenantId,
      userId: prompt.userId,
      at: prompt.timestamp,
      text: prompt.text.slice(0, MAX_TURN_CHARS),
      episodeId,
    });
  }

  /** Forgets the index (after an aborted transaction the retried batch must decide again). */
  clear(): void {
    this.threads.clear();
  }

  private outcomeOf(
    prompt: PromptSubmitted,
    threadId: string,
    evidence: LinkEvidence,
  ): ThreadLinkRecord | null {
    const awaiting = evidence.awaitingOutcome;
    if (!awaiting) return null;
    if (awaiting.threadId !== threadId) {
      evidence.awaitingOutcome = null; // the thread ended without evidence either way
      return null;
    }
    const { decision, contextKeywords } = awaiting;
    const outcome = classifyOutcome(prompt.text, decision.decision, { contextKeywords });
    if (outcome === null) return null;
    evidence.awaitingOutcome = null;
    return {
      ...decision,
      eventId: uuidV5(`thread-link-outcome:${decision.decisionId}`),
      timestamp: prompt.timestamp,
      outcome,
      outcomeAt: prompt.timestamp,
    };
  }

  private recordDecision(
    prompt: PromptSubmitted,
    threadId: string,
    opened: EpisodeSnapshot,
    candidates: CrossThreadCandidate[],
    { record }: CrossThreadDecisionResult,
    evidence: LinkEvidence,
  ): ThreadLinkRecord | null {
    if (!record) return null;
    const linkedEpisodeId = this.threads.latestEpisodeOf(record.candidateThreadId);
    if (record.decision === 'LINK' && linkedEpisodeId) {
      evidence.crossThread = { ...evidence.crossThread, [opened.episodeId]: [linkedEpisodeId] };
    }
    const decision = threadLinkRecord(record, {
      projectId: prompt.projectId,
      sessionId: prompt.sessionId,
      newEpisodeId: opened.episodeId,
      linkedEpisodeId,
    });
    const candidate = candidates.find((c) => c.threadId === record.candidateThreadId);
    evidence.awaitingOutcome = {
      threadId,
      decision,
      contextKeywords: intentKeywords((candidate?.recentTurns ?? []).join('\n')),
    };
    return decision;
  }
}

/** A published decision back in the core's shape, for `tuningReport` (seed 004 §2.4). */
export function toLinkDecisionRecord(decision: ThreadLinkDecision): LinkDecisionRecord {
  const llmAnswered = decision.llmRelated !== null && decision.llmConfidence !== null;
  return {
    decisionId: decision.decisionId,
    tenantId: decision.tenantId,
    userId: decision.userId,
    newThreadId: decision.newThreadId,
    candidateThreadId: decision.candidateThreadId,
    decidedAt: decision.timestamp,
    algorithmic: {
      score: decision.score,
      threshold: decision.threshold,
      link: decision.score > decision.threshold,
      confidence: decision.algorithmicConfidence,
      components: {
        keyword: decision.keywordScore,
        entity: decision.entityScore,
        topic: decision.topicScore,
        recency: decision.recencyScore,
      },
      topicMeasure: decision.topicMeasure as ContinuityTopicMeasure,
      weights: { ...DEFAULT_CROSS_THREAD_OPTIONS.weights },
      hoursSinceActivity: decision.hoursSinceActivity,
    },
    llm: llmAnswered
      ? {
          related: decision.llmRelated!,
          confidence: decision.llmConfidence!,
          reasoning: decision.llmReasoning ?? '',
          keySignals: [],
        }
      : null,
    llmStatus: decision.llmStatus as LlmAssessmentStatus,
    llmError: null,
    agreement: llmAnswered ? !decision.uncertain : null,
    decision: decision.decision,
    uncertain: decision.uncertain,
    decidedBy: decision.decidedBy,
    outcome: decision.outcome,
    outcomeAt: decision.outcomeAt,
  };
}
