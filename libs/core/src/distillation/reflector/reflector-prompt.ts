import { DISTILLER_SYSTEM_PROMPT } from '../distill-prompt';
import { formatDistillation } from '../format';
import { REFLECTION_SECTIONS, type ReviewProposal } from '../proposals/types';
import { estimateTokens } from '../tokens';
import type { Distillation } from '../types';
import { COMPRESSION_GUIDANCE, type CompressionLevel } from './compression';
import type { GradedDistillation } from './temporal-gradient';

/**
 * The reflector's system prompt (seed 001, after Mastra's reflector): it is given the distiller's
 * instructions so it knows how the observations were made, then condenses them into proposed
 * MEMORY.md lines per section.
 */
export const REFLECTOR_SYSTEM_PROMPT = `You are the reflector of Engram, the memory of AI coding agents.

You receive distillations of coding-agent sessions of one project, written by the distiller
(its instructions follow, for reference). Your job: condense them into proposed lines for the
project's MEMORY.md, which a person reviews before anything is kept.

## Distiller instructions (for reference)
${DISTILLER_SYSTEM_PROMPT}

## Your task
MEMORY.md has these sections: ${REFLECTION_SECTIONS.join(', ')}.

1. TEMPORAL GRADIENT: keep recent observations (last 24 h) nearly verbatim; distill older ones to
   their core fact. Distillations marked (condensed) are already reduced to narratives and 🔴 facts.
2. ASSERTION PRECEDENCE: the developer's statements (🔴) stand unless a later statement
   contradicts them; a later question does not.
3. MERGE RELATED: one line per topic across sessions.
4. PRESERVE SPECIFICS: paths, versions, commands, error messages.
5. DROP RESOLVED: for a problem that was fixed later, keep the fix (and the root cause if it is a
   useful lesson), not the problem.
6. CATEGORIZE each line:
   - User: the developer's preferences, working style, how they decide;
   - Hard Rules: explicit always/never constraints the developer stated;
   - System Architecture: services, topology, key paths, configuration, decisions about them;
   - Patterns: what works and what does not, debugging lessons, conventions.
7. Do not repeat what the current MEMORY.md already says. Propose nothing rather than filler.
8. Only 🔴 facts and 🟡 facts that recur across sessions become proposals; never 🟢.

## Output format
<proposals>
## Proposed for: {section}
- {one MEMORY.md line}
- {one MEMORY.md line}

## Proposed for: {section}
- {one MEMORY.md line}
</proposals>

<summary>
{1-2 sentences on what changed across the distillations}
</summary>`;

export interface ReflectorPromptOptions {
  /** Budget of the whole prompt (default 60,000 tokens). */
  maxPromptTokens: number;
  level: CompressionLevel;
  /** The project's current MEMORY.md (renderMemoryMd), so nothing is proposed twice. */
  memoryMd: string;
}

export interface ReflectorPrompt {
  system: string;
  user: string;
  /** Tokens of the distillations in the prompt: the output must be shorter than this. */
  inputTokens: number;
  estimatedTokens: number;
  /** Distillations left out to fit the budget (the oldest go first). */
  omitted: number;
}

/**
 * The reflector's prompt: the current MEMORY.md, then the distillations oldest first in the
 * segment format (condensed ones marked), then the compression guidance of `level`. Over budget,
 * the oldest distillations are left out.
 */
export function buildReflectorPrompt(
  graded: readonly GradedDistillation[],
  options: Partial<ReflectorPromptOptions> = {},
): ReflectorPrompt {
  const level = options.level ?? 0;
  const memoryMd = options.memoryMd?.trim() ?? '';
  const head = [
    'Current MEMORY.md:',
    '<memory-md>',
    memoryMd === '' ? '(empty)' : memoryMd,
    '</memory-md>',
    '',
    'Distillations, oldest first:',
    '',
  ].join('\n');
  const guidance = COMPRESSION_GUIDANCE[level];
  const budget =
    (options.maxPromptTokens ?? 60_000) -
    estimateTokens(REFLECTOR_SYSTEM_PROMPT) -
    estimateTokens(head) -
    estimateTokens(guidance);
  const blocks = graded.map((g) => distillationBlock(g.distillation, g.condensed));
  const kept: string[] = [];
  let used = 0;
  for (let i = blocks.length - 1; i >= 0; i -= 1) {
    const cost = estimateTokens(blocks[i]) + 1;
    if (used + cost > budget) break;
    kept.unshift(blocks[i]);
    used += cost;
  }
  const body = kept.join('\n\n');
  const user = `${head}${body}${guidance}`;
  return {
    system: REFLECTOR_SYSTEM_PROMPT,
    user,
    inputTokens: estimateTokens(body),
    estimatedTokens: estimateTokens(REFLECTOR_SYSTEM_PROMPT) + estimateTokens(user),
    omitted: blocks.length - kept.length,
  };
}

function distillationBlock(distillation: Distillation, condensed: boolean): string {
  const when = distillation.date ?? 'undated';
  const mark = condensed ? ' (condensed)' : '';
  return `### ${when} · session ${distillation.sessionId} · ${distillation.trigger}${mark}\n${formatDistillation(distillation)}`;
}

/** Proposals in the reflector's output format (what the extractive reflector "writes"). */
export function renderProposalsText(
  proposals: readonly Pick<ReviewProposal, 'section' | 'text'>[],
): string {
  const lines = ['<proposals>'];
  for (const section of REFLECTION_SECTIONS) {
    const items = proposals.filter((p) => p.section === section);
    if (items.length === 0) continue;
    lines.push(`## Proposed for: ${section}`, ...items.map((p) => `- ${p.text}`), '');
  }
  lines.push('</proposals>');
  return lines.join('\n');
}
