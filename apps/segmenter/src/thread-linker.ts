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
  RecentThreadIndex,
  type UserThreadsState,
} from '@engram/core';
import { threadLinkRecord } from './episode-records';

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

/** A user's recent threads on one partition, as the changelog holds them (key: `threadsKey`). */
export interface ThreadsRecord extends UserThreadsState {
  v: 1;
  kind: 'threads';
  partition: number;
}

/** The changelog key of a user's threads record (session keys never start with it). */
export const THREADS_KEY_PREFIX = 'segmenter:threads:';

export function threadsKey(userKey: string): string {
  return THREADS_KEY_PREFIX + userKey;
}

/**
 * Cross-thread linking in the stream (SPEC §4.3, seed 004 §2.3–2.4): a user's new thread is
 * decided against their recent threads (algorithmically, and with the LLM assessor when one is
 * configured: then the batch waits for it, bounded by the core's timeout), a LINK marks the new
 * episode, and the next user prompt of the new thread that is evidence either
 * way records the decision's outcome (CORRECT / INCORRECT) by republishing it under its key.
 */
export class ThreadLinker {
  /**
   * The recent-thread index per input partition (a thread belongs to its session's partition):
   * persisted in the changelog, restored with the partition and forgotten with it. Candidates
   * come from every partition this instance holds.
   */
  private readonly slices = new Map<number, RecentThreadIndex>();
  /** Users whose record changed since the last `takeChanges()`, per partition. */
  private readonly changed = new Map<number, Set<string>>();

  constructor(private readonly assessor: LlmContinuityAssessor | null = null) {}

  /** Puts back a user's threads record read from the changelog. */
  restore(record: ThreadsRecord): void {
    this.slice(record.partition).restoreUser(record);
  }

  /** Forgets a partition's threads (it moved away, or its uncommitted state is dropped). */
  forget(partition: number): void {
    this.slices.delete(partition);
    this.changed.delete(partition);
  }

  /** Evicts threads idle for longer than the window before `now` (the stream time). */
  prune(now: number): void {
    for (const [partition, slice] of this.slices) {
      for (const key of slice.prune(now)) this.markChanged(partition, key);
    }
  }

  /** The changed users' records (or null: tombstones), keyed and partitioned for the changelog. */
  takeChanges(): { key: string; partition: number; value: ThreadsRecord | null }[] {
    const changes: { key: string; partition: number; value: ThreadsRecord | null }[] = [];
    for (const [partition, keys] of this.changed) {
      const slice = this.slices.get(partition);
      for (const userKey of [...keys].sort()) {
        const state = slice?.userState(userKey) ?? null;
        changes.push({
          key: threadsKey(userKey),
          partition,
          value: state && { v: 1, kind: 'threads', partition, ...state },
        });
      }
    }
    this.changed.clear();
    return changes;
  }

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
    partition: number,
  ): ThreadLinkRecord[] | Promise<ThreadLinkRecord[]> {
    const records: ThreadLinkRecord[] = [];
    const outcome = this.outcomeOf(prompt, threadId, evidence);
    if (outcome) records.push(outcome);
    const finish = (decided: ThreadLinkRecord | null): ThreadLinkRecord[] => {
      if (decided) records.push(decided);
      this.recordTurn(prompt, threadId, episodeId, partition);
      return records;
    };
    if (!opened || this.known(threadId)) return finish(null);
    const candidates = [...this.slices.keys()]
      .sort((a, b) => a - b)
      .flatMap((p) =>
        this.slices.get(p)!.candidates(prompt.tenantId, prompt.userId, prompt.timestamp),
      );
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

  private known(threadId: string): boolean {
    for (const slice of this.slices.values()) if (slice.has(threadId)) return true;
    return false;
  }

  private latestEpisodeOf(threadId: string): string | null {
    for (const slice of this.slices.values()) {
      const episodeId = slice.latestEpisodeOf(threadId);
      if (episodeId !== null) return episodeId;
    }
    return null;
  }

  private slice(partition: number): RecentThreadIndex {
    let slice = this.slices.get(partition);
    if (!slice) {
      slice = new RecentThreadIndex();
      this.slices.set(partition, slice);
    }
    return slice;
  }

  private markChanged(partition: number, userKey: string): void {
    let keys = this.changed.get(partition);
    if (!keys) {
      keys = new Set();
      this.changed.set(partition, keys);
    }
    keys.add(userKey);
  }

  private recordTurn(
    prompt: PromptSubmitted,
    threadId: string,
    episodeId: string,
    partition: number,
  ): void {
    const userKey = this.slice(partition).record({
      threadId,
      tenantId: prompt.tenantId,
      userId: prompt.userId,
      at: prompt.timestamp,
      text: prompt.text.slice(0, MAX_TURN_CHARS),
      episodeId,
    });
    this.markChanged(partition, userKey);
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
    const linkedEpisodeId = this.latestEpisodeOf(record.candidateThreadId);
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
