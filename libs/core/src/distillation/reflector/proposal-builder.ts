import { earliest } from '../time';
import type { EpochMillis, Memory } from '@engram/contracts';
import { intentKeywords, jaccard } from '../../segmentation/intent-keywords';
import { factMemoryId, normaliseContent } from '../memories';
import { nextProposalIds } from '../proposals/proposal-ids';
import { expiryOf } from '../proposals/review';
import {
  REFLECTION_SECTIONS,
  type ProposalEvidence,
  type ReflectionSection,
  type ReviewProposal,
} from '../proposals/types';
import { truncateChars } from '../tokens';
import {
  priorityRank,
  type Distillation,
  type DistilledFact,
  type DistilledSegment,
} from '../types';

/** A fact with the distillation and segment it came from. */
export interface FactRef {
  fact: DistilledFact;
  distillation: Distillation;
  segment: DistilledSegment;
}

export function factRefs(distillations: readonly Distillation[]): FactRef[] {
  return distillations.flatMap((distillation) =>
    distillation.segments.flatMap((segment) =>
      segment.facts.map((fact) => ({ fact, distillation, segment })),
    ),
  );
}

/** A proposal before it has an id: section, text and the facts behind it. */
export interface ProposalDraft {
  section: ReflectionSection;
  text: string;
  refs: FactRef[];
}

/** What is already proposed or curated; nothing is proposed twice. */
export interface ExistingReview {
  proposals?: readonly Pick<ReviewProposal, 'proposalId' | 'text' | 'originalText'>[];
  curatedMemories?: readonly Pick<Memory, 'content'>[];
}

export interface SkippedDraft {
  text: string;
  /** `no-evidence`: an LLM's line that no distilled fact supports. */
  reason: 'already-proposed' | 'already-curated' | 'no-evidence';
}

/** Two texts this similar (Jaccard of intent keywords) say the same thing. */
export const DUPLICATE_SIMILARITY = 0.8;

/**
 * Drafts become pending proposals: drafts that repeat an existing proposal (in any state, so a
 * rejected line is not proposed again) or a curated memory are skipped; the rest get the next
 * `p-YYYYMMDD-NNN` ids of `now`'s day in section order, evidence from their facts, and a 7-day
 * expiry. Deterministic for the same input.
 */
export function draftsToProposals(
  drafts: readonly ProposalDraft[],
  context: { tenantId: string; projectId: string; now: EpochMillis; existing?: ExistingReview },
): { proposals: ReviewProposal[]; skipped: SkippedDraft[] } {
  const proposed = (context.existing?.proposals ?? []).flatMap((p) => [p.text, p.originalText]);
  const curated = (context.existing?.curatedMemories ?? []).map((m) => m.content);
  const skipped: SkippedDraft[] = [];
  const kept: ProposalDraft[] = [];
  for (const draft of orderDrafts(drafts)) {
    if (repeats(draft.text, curated)) skipped.push({ text: draft.text, reason: 'already-curated' });
    else if (repeats(draft.text, [...proposed, ...kept.map((k) => k.text)])) {
      skipped.push({ text: draft.text, reason: 'already-proposed' });
    } else kept.push(draft);
  }
  const ids = nextProposalIds(
    context.now,
    (context.existing?.proposals ?? []).map((p) => p.proposalId),
    kept.length,
  );
  const proposals = kept.map((draft, index): ReviewProposal => ({
    proposalId: ids[index],
    tenantId: context.tenantId,
    projectId: context.projectId,
    section: draft.section,
    title: titleOf(draft.text),
    text: draft.text,
    originalText: draft.text,
    evidence: evidenceOf(draft.refs),
    status: 'pending',
    createdAt: context.now,
    expiresAt: expiryOf(context.now),
    decidedAt: null,
    decidedBy: null,
    promotedMemoryId: null,
    history: [
      { action: 'create', from: null, to: 'pending', at: context.now, by: null, note: null },
    ],
  }));
  return { proposals, skipped };
}

/** Section order, then the time of the earliest fact behind the draft, then text. */
function orderDrafts(drafts: readonly ProposalDraft[]): ProposalDraft[] {
  const firstAt = (draft: ProposalDraft): number =>
    earliest(draft.refs.map((ref) => ref.fact.at ?? ref.distillation.triggerAt));
  return [...drafts].sort(
    (a, b) =>
      REFLECTION_SECTIONS.indexOf(a.section) - REFLECTION_SECTIONS.indexOf(b.section) ||
      firstAt(a) - firstAt(b) ||
      (a.text < b.text ? -1 : a.text > b.text ? 1 : 0),
  );
}

/**
 * Whether `text` says what one of `others` says: equal when normalised, or nearly the same
 * words.
 */
export function repeats(text: string, others: readonly string[]): boolean {
  const normalised = normaliseContent(text);
  const keywords = intentKeywords(normalised);
  return others.some((other) => {
    if (normaliseContent(other) === normalised) return true;
    return (
      keywords.length > 0 &&
      jaccard(keywords, intentKeywords(normaliseContent(other))) >= DUPLICATE_SIMILARITY
    );
  });
}

/**
 * The evidence of a set of facts: the memories they became (facts at 🟡 or above; 🟢 facts make
 * no memory), their events, sessions and episodes — each distinct, in first-seen order.
 */
export function evidenceOf(refs: readonly FactRef[]): ProposalEvidence {
  const memoryIds = new Set<string>();
  const eventIds = new Set<string>();
  const sessionIds = new Set<string>();
  const episodeIds = new Set<string>();
  for (const { fact, distillation, segment } of refs) {
    if (priorityRank(fact.priority) <= priorityRank('🟡')) {
      memoryIds.add(factMemoryId(distillation, fact));
    }
    for (const id of fact.sourceEventIds) eventIds.add(id);
    sessionIds.add(distillation.sessionId);
    const episodeId = segment.episodeId ?? distillation.episodeId;
    if (episodeId !== null) episodeIds.add(episodeId);
  }
  return {
    memoryIds: [...memoryIds],
    eventIds: [...eventIds],
    sessionIds: [...sessionIds],
    episodeIds: [...episodeIds],
  };
}

/** A short title: the text's first sentence or clause, at most 60 characters. */
export function titleOf(text: string): string {
  const clause = text.split(/(?<=[.!?;])\s|\s[—–-]\s/)[0].trim();
  return truncateChars(clause === '' ? text : clause, 60);
}
