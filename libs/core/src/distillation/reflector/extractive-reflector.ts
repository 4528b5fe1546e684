import type { EpochMillis, Memory } from '@engram/contracts';
import { intentKeywords, jaccard } from '../../segmentation/intent-keywords';
import { formatDistillation } from '../format';
import type { ReviewProposal } from '../proposals/types';
import { estimateTokens } from '../tokens';
import { priorityRank, type Distillation, type FactKind } from '../types';
import { validateCompression } from './compression';
import {
  draftsToProposals,
  factRefs,
  type FactRef,
  type ProposalDraft,
  type SkippedDraft,
} from './proposal-builder';
import { renderProposalsText } from './reflector-prompt';
import { sectionOf } from './sections';
import { applyTemporalGradient, GRADIENT_AGE_DAYS } from './temporal-gradient';

export interface ReflectionInput {
  tenantId: string;
  projectId: string;
  now: EpochMillis;
  /** The project's distillations to reflect (any order). */
  distillations: readonly Distillation[];
  /** Proposals already made (any state) and curated memories: never proposed again. */
  existingProposals?: readonly Pick<ReviewProposal, 'proposalId' | 'text' | 'originalText'>[];
  curatedMemories?: readonly Pick<Memory, 'content'>[];
  /** Days after which a distillation is condensed (default 3). */
  gradientAgeDays?: number;
}

export interface ReflectionResult {
  proposals: ReviewProposal[];
  skipped: SkippedDraft[];
  /** Tokens of the (graded) distillations read and of the proposals written. */
  inputTokens: number;
  outputTokens: number;
  /** validateCompression(inputTokens, outputTokens). */
  compressed: boolean;
  /** How many distillations the temporal gradient condensed. */
  condensed: number;
}

/** Facts of these kinds are working context, not MEMORY.md lines. */
const NOT_FOR_MEMORY_MD: ReadonlySet<FactKind> = new Set([
  'file-change',
  'exploration',
  'error-unresolved',
  'idea',
]);

/** Facts of one section this similar (Jaccard of intent keywords) are merged. */
export const MERGE_SIMILARITY = 0.6;

/**
 * The reflector without an LLM: seed 001's condensation rules, applied extractively.
 * 1. Temporal gradient: distillations older than 3 days keep narratives and 🔴 facts.
 * 2. Candidates: 🔴 facts, and 🟡 facts, of the kinds that belong in MEMORY.md; 🟢 never.
 * 3. Merge related: facts of the same section with similar keywords form one group; the group's
 *    text is its latest fact (a later statement supersedes an earlier one), ties to the more
 *    durable, then the longer.
 * 4. A group becomes a proposal when it holds a 🔴 fact, or its 🟡 facts recur in two sessions.
 * 5. Drafts that repeat an existing proposal or curated memory are skipped; the rest get ids.
 */
export function reflectExtractively(input: ReflectionInput): ReflectionResult {
  const graded = applyTemporalGradient(
    sortByTime(input.distillations),
    input.now,
    input.gradientAgeDays ?? GRADIENT_AGE_DAYS,
  );
  const distillations = graded.map((g) => g.distillation);
  const candidates = factRefs(distillations).filter(
    (ref) =>
      ref.fact.priority !== '🟢' &&
      (ref.fact.kind === null || !NOT_FOR_MEMORY_MD.has(ref.fact.kind)),
  );
  const drafts = mergeRelated(candidates).filter(qualifies).map(toDraft);
  const { proposals, skipped } = draftsToProposals(drafts, {
    tenantId: input.tenantId,
    projectId: input.projectId,
    now: input.now,
    existing: { proposals: input.existingProposals, curatedMemories: input.curatedMemories },
  });
  const inputTokens = distillations.reduce(
    (sum, d) => sum + estimateTokens(formatDistillation(d)),
    0,
  );
  const outputTokens = estimateTokens(renderProposalsText(proposals));
  return {
    proposals,
    skipped,
    inputTokens,
    outputTokens,
    compressed: validateCompression(inputTokens, outputTokens),
    condensed: graded.filter((g) => g.condensed).length,
  };
}

interface Group {
  section: ProposalDraft['section'];
  keywords: string[];
  refs: FactRef[];
}

function mergeRelated(refs: readonly FactRef[]): Group[] {
  const groups: Group[] = [];
  for (const ref of refs) {
    const section = sectionOf(ref.fact);
    const keywords = intentKeywords(memoryLine(ref));
    const group = groups.find(
      (g) => g.section === section && jaccard(g.keywords, keywords) >= MERGE_SIMILARITY,
    );
    if (group === undefined) {
      groups.push({ section, keywords, refs: [ref] });
    } else {
      group.refs.push(ref);
      group.keywords = [...new Set([...group.keywords, ...keywords])];
    }
  }
  return groups;
}

function qualifies(group: Group): boolean {
  if (group.refs.some((ref) => ref.fact.priority === '🔴')) return true;
  return new Set(group.refs.map((ref) => ref.distillation.sessionId)).size >= 2;
}

function toDraft(group: Group): ProposalDraft {
  const representative = [...group.refs].sort(
    (a, b) =>
      timeOf(b) - timeOf(a) ||
      priorityRank(a.fact.priority) - priorityRank(b.fact.priority) ||
      b.fact.text.length - a.fact.text.length,
  )[0];
  return { section: group.section, text: memoryLine(representative), refs: group.refs };
}

function timeOf(ref: FactRef): number {
  return ref.fact.at ?? ref.distillation.lastEntryAt ?? ref.distillation.triggerAt;
}

/** Assertion facts: "Rule: …" (now), and `User rule: "…"` as distillations stored before wrote. */
const LABELLED = [
  /^(?:User corrected the agent|User rule|User preference|Decision|Idea, not committed to): "(.*)"$/s,
  /^(?:Correction|Rule|Preference|Decision|Change|Idea, not committed to): (?!")(.*)$/s,
];

/**
 * A fact as a MEMORY.md line: the user's own words for their assertions (without the
 * "Rule: …" label or a leading "No," / "Actually,"), other facts as written.
 */
export function memoryLine(ref: Pick<FactRef, 'fact'>): string {
  const match =
    LABELLED.map((pattern) => pattern.exec(ref.fact.text)).find((m) => m !== null) ?? null;
  if (match === null) return ref.fact.text;
  const words = match[1].replace(/^(?:no|nope|nah|actually|wait|wrong)\b[\s,.!:;—-]*/i, '').trim();
  const line = words === '' ? match[1] : words;
  return line.charAt(0).toUpperCase() + line.slice(1);
}

function sortByTime(distillations: readonly Distillation[]): Distillation[] {
  return [...distillations].sort(
    (a, b) =>
      (a.firstEntryAt ?? a.triggerAt) - (b.firstEntryAt ?? b.triggerAt) ||
      (a.dedupeKey < b.dedupeKey ? -1 : a.dedupeKey > b.dedupeKey ? 1 : 0),
  );
}
