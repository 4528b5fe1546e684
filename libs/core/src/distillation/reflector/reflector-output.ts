import { intentKeywords, jaccard } from '../../segmentation/intent-keywords';
import { findTagBlock } from '../tag-blocks';
import { estimateTokens } from '../tokens';
import type { ReflectionSection } from '../proposals/types';
import { compressionDecision, type CompressionLevel } from './compression';
import {
  reflectExtractively,
  memoryLine,
  type ReflectionInput,
  type ReflectionResult,
} from './extractive-reflector';
import { draftsToProposals, factRefs, type FactRef, type ProposalDraft } from './proposal-builder';
import { sectionNamed } from './sections';
import { applyTemporalGradient, GRADIENT_AGE_DAYS } from './temporal-gradient';

export interface ParsedReflectorOutput {
  status: 'proposals' | 'fallback' | 'empty' | 'unparseable';
  lines: { section: ReflectionSection; text: string }[];
  summary: string | null;
  truncated: boolean;
  issues: string[];
}

const HEADING = /^\s*#{1,6}\s*(?:Proposed for:\s*)?(.+?)\s*$/i;
const ITEM = /^\s*(?:[-*•+]|\d+[.)])\s+(?:\[[ xX]?\]\s*)?(.*)$/;

/**
 * Parses the reflector's output, tolerant like the distiller's parser: a missing close tag keeps
 * what came before; without `<proposals>` the `## Proposed for:` headings are looked for
 * anywhere; unknown sections go to Patterns; list items lose checkboxes, `(YYYY-MM-DD)` prefixes
 * and priority markers. Never throws.
 */
export function parseReflectorOutput(raw: string | null | undefined): ParsedReflectorOutput {
  try {
    return parseOrThrow(raw);
  } catch (error) {
    // A parser bug must not lose the reflection: the caller falls back to the extractive one.
    const problem = error instanceof Error ? error.message : String(error);
    return {
      status: 'unparseable',
      lines: [],
      summary: null,
      truncated: false,
      issues: [`parser failed: ${problem}`],
    };
  }
}

function parseOrThrow(raw: string | null | undefined): ParsedReflectorOutput {
  const text = typeof raw === 'string' ? raw.replace(/\r\n?/g, '\n') : '';
  const issues: string[] = [];
  if (text.trim() === '') {
    return {
      status: 'empty',
      lines: [],
      summary: null,
      truncated: false,
      issues: ['empty output'],
    };
  }
  const block = findTagBlock(text, 'proposals', ['summary']);
  const summaryBlock = findTagBlock(text, 'summary', ['proposals']);
  const truncated =
    (block !== null && !block.closed) || (summaryBlock !== null && !summaryBlock.closed);
  if (truncated) {
    issues.push('a block is not closed (truncated output); kept what came before the cut');
  }
  if (block === null) issues.push('no <proposals> block; read the headings and items anywhere');
  const lines = proposalLines(block?.content ?? text, issues);
  const summary = summaryBlock?.content.trim() || null;
  const status =
    lines.length > 0
      ? block === null
        ? 'fallback'
        : 'proposals'
      : block === null
        ? 'unparseable'
        : 'empty';
  return { status, lines, summary, truncated, issues };
}

function proposalLines(content: string, issues: string[]): ParsedReflectorOutput['lines'] {
  const lines: ParsedReflectorOutput['lines'] = [];
  let section: ReflectionSection | null = null;
  let unknown = 0;
  for (const line of content.split('\n')) {
    const heading = HEADING.exec(line);
    if (heading !== null) {
      section = sectionNamed(heading[1]);
      if (section === null) {
        issues.push(`unknown section "${heading[1]}"; its lines go to Patterns`);
      }
      continue;
    }
    const item = ITEM.exec(line);
    if (item === null) continue;
    const text = item[1]
      .replace(/^\(?\d{4}-\d{2}-\d{2}\)?\s*[—:-]?\s*/, '')
      .replace(/^(?:🔴|🟡|🟢)\uFE0F?\s*/u, '')
      .trim();
    if (text === '') continue;
    if (section === null) unknown += 1;
    lines.push({ section: section ?? 'Patterns', text });
  }
  if (unknown > 0) issues.push(`${unknown} lines without a known section went to Patterns`);
  return lines;
}

/** A proposed line needs facts with at least this keyword overlap as evidence. */
export const EVIDENCE_SIMILARITY = 0.2;

/**
 * Proposals from the reflector's parsed lines. Each line's evidence is the facts whose words it
 * shares (Jaccard ≥ EVIDENCE_SIMILARITY); a line that no fact supports is an invention and is
 * skipped (reason `no-evidence`).
 */
export function proposalsFromReflectorOutput(
  parsed: ParsedReflectorOutput,
  input: ReflectionInput,
): Pick<ReflectionResult, 'proposals' | 'skipped'> {
  const graded = applyTemporalGradient(
    input.distillations,
    input.now,
    input.gradientAgeDays ?? GRADIENT_AGE_DAYS,
  );
  const refs = factRefs(graded.map((g) => g.distillation)).map((ref) => ({
    ref,
    keywords: intentKeywords(memoryLine(ref)),
  }));
  const drafts: ProposalDraft[] = [];
  const unsupported: { text: string; reason: 'no-evidence' }[] = [];
  for (const line of parsed.lines) {
    const keywords = intentKeywords(line.text);
    const evidence: FactRef[] = refs
      .filter((r) => jaccard(keywords, r.keywords) >= EVIDENCE_SIMILARITY)
      .map((r) => r.ref);
    if (evidence.length === 0) unsupported.push({ text: line.text, reason: 'no-evidence' });
    else drafts.push({ section: line.section, text: line.text, refs: evidence });
  }
  const { proposals, skipped } = draftsToProposals(drafts, {
    tenantId: input.tenantId,
    projectId: input.projectId,
    now: input.now,
    existing: { proposals: input.existingProposals, curatedMemories: input.curatedMemories },
  });
  return { proposals, skipped: [...skipped, ...unsupported] };
}

export type ReflectorAttempt =
  | { kind: 'accept'; result: ReflectionResult; parsed: ParsedReflectorOutput }
  | { kind: 'retry'; level: CompressionLevel; guidance: string; parsed: ParsedReflectorOutput }
  | { kind: 'fallback'; reason: string; result: ReflectionResult; parsed: ParsedReflectorOutput };

/**
 * One LLM reflection attempt judged: output not shorter than `inputTokens` → retry at the next
 * guidance level (or, after level 2, fall back to the extractive reflector); output with no
 * usable line → fall back; otherwise accept its proposals.
 */
export function evaluateReflectorAttempt(
  raw: string | null | undefined,
  attempt: { level: CompressionLevel; inputTokens: number },
  input: ReflectionInput,
): ReflectorAttempt {
  const parsed = parseReflectorOutput(raw);
  const outputTokens = estimateTokens(typeof raw === 'string' ? raw : '');
  const decision = compressionDecision(attempt.level, attempt.inputTokens, outputTokens);
  if (decision.verdict === 'retry') {
    return { kind: 'retry', level: decision.level, guidance: decision.guidance, parsed };
  }
  if (decision.verdict === 'give-up') {
    return {
      kind: 'fallback',
      reason: decision.reason,
      result: reflectExtractively(input),
      parsed,
    };
  }
  if (parsed.status === 'unparseable') {
    return {
      kind: 'fallback',
      reason: 'the reflector output holds no proposals',
      result: reflectExtractively(input),
      parsed,
    };
  }
  const { proposals, skipped } = proposalsFromReflectorOutput(parsed, input);
  return {
    kind: 'accept',
    parsed,
    result: {
      proposals,
      skipped,
      inputTokens: attempt.inputTokens,
      outputTokens,
      compressed: true,
      condensed: applyTemporalGradient(
        input.distillations,
        input.now,
        input.gradientAgeDays ?? GRADIENT_AGE_DAYS,
      ).filter((g) => g.condensed).length,
    },
  };
}
