import type { CandidateFacts, MemoryCandidate } from '../candidates';
import { reachedState } from '../test-sequence-detection';

/** A memory's text: the content and the short form for citation chips. */
export interface MemoryText {
  content: string;
  citationText: string;
}

type Facts<K extends CandidateFacts['kind']> = Extract<CandidateFacts, { kind: K }>;
type Renderers = { [K in CandidateFacts['kind']]: (facts: Facts<K>) => MemoryText };

const MAX_CITATION_CHARS = 120;

/**
 * Deterministic synthesis (SPEC §5: "deterministic templates otherwise"): one sentence or two per
 * memory type, from the facts a rule found. The same facts always give the same text, so the
 * memory's event id and a replay's output are stable.
 */
export function renderMemoryTemplate(candidate: MemoryCandidate): MemoryText {
  const render = RENDERERS[candidate.facts.kind] as (facts: CandidateFacts) => MemoryText;
  const text = render(candidate.facts);
  return { content: text.content, citationText: text.citationText.slice(0, MAX_CITATION_CHARS) };
}

const RENDERERS: Renderers = {
  causal_dependency: (f) => {
    const first = f.direction === 'a_to_b' ? f.fileA : f.direction === 'b_to_a' ? f.fileB : null;
    const order = first === null ? '' : ` ${code(first)} is usually opened first.`;
    return {
      content: `${code(f.fileA)} and ${code(f.fileB)} are worked on together: co-accessed within a few steps in ${f.sessionCount} sessions (weight ${f.weight.toFixed(2)}).${order} When changing one, check the other.`,
      citationText: `${f.fileA} ↔ ${f.fileB}`,
    };
  },
  module_insight: (f) => ({
    content: `${code(f.filePath)} was read ${f.readCount} times in one session without being edited (over ${duration(f.dwellMs)}): it is hard to take in at one reading. Read it deliberately, or look for the part you need first.`,
    citationText: `${f.filePath} is hard to read`,
  }),
  error_pattern: (f) => ({
    content: `Recurring ${f.toolName} error (${f.occurrences} times): "${f.normalisedError}".${sentence('Resolved before', f.resolutions, '; ')}`,
    citationText: `${f.toolName}: ${f.normalisedError}`,
  }),
  gotcha: (f) => ({
    content: `Edits to ${code(f.filePath)} often need correcting: re-edited within ${f.withinSteps} step(s), ${f.occurrences} times (likely cause: ${dominantCause(f.causes)}).${sentence('Changes to it needed paired edits in', f.pairedFiles.map(code))} Check assumptions before editing it.`,
    citationText: `re-edits of ${f.filePath}`,
  }),
  prefetch_pattern: (f) => {
    const parts = [
      list('always (> 80 %)', f.alwaysReadFiles),
      list('frequently (> 50 %)', f.frequentlyReadFiles),
    ].filter((part) => part !== '');
    return {
      content: `Work in ${code(f.module)} reads, over ${f.sessionCount} sessions, ${parts.join('; ')}. Load them up front.`,
      citationText: `prefetch for ${f.module}`,
    };
  },
  dead_end: (f) => {
    const how = f.revertCommand !== null ? ` with \`${f.revertCommand}\`` : ' by undoing the edits';
    const why = sentence(
      'Errors while trying it',
      f.errorsSeen.map((e) => `"${e}"`),
      '; ',
    );
    const instead = sentence('Instead, the work went to', f.alternativeFiles.map(code));
    return {
      content: `Dead end: an approach changing ${f.approachFiles.map(code).join(', ')} was abandoned after ${f.stepsSpent} steps and reverted${how}.${why}${instead} Do not retry it without a new reason.`,
      citationText: `dead end: ${f.revertedFiles.join(', ')}`,
    };
  },
  context_cost: (f) => ({
    content: `Work in ${code(f.module)} uses about ${f.averageTokens} tokens per session (p90 ${f.p90Tokens}, ${f.sampleCount} sessions).`,
    citationText: `${f.module}: ~${f.averageTokens} tokens/session`,
  }),
  task_calibration: (f) => ({
    content: `Tasks in ${code(f.module)} (${f.methodology}) take ${f.ratio.toFixed(2)}× the planned steps: ${f.averageActualSteps.toFixed(1)} actual vs ${f.averagePlannedSteps.toFixed(1)} planned over ${f.sampleCount} sessions.`,
    citationText: `${f.module}: ${f.ratio.toFixed(2)}× planned steps`,
  }),
  workflow_recipe: (f) => {
    const steps = f.steps.map(
      (s, i) => `${i + 1}. ${s.tool}${s.file !== null ? ` ${code(s.file)}` : ''}`,
    );
    return {
      content: `Recipe for work in ${code(f.module)} (followed in ${f.sessionCount} successful sessions): ${steps.join(', ')}.`,
      citationText: `recipe: ${f.toolSequence.join(' → ')} in ${f.module}`,
    };
  },
  qa_failure: (f) => ({
    content: `QA found (${f.severity}): ${f.description}${f.file !== null ? ` in ${code(f.file)}` : ''}.${sentence('Tried', f.whatWasTried)}${sentence('Do instead', f.recommendation)}`,
    citationText: `QA ${f.severity}: ${f.description}`,
  }),
  e2e_observation: (f) => {
    const seen = f.occurrences > 1 ? ` (seen ${f.occurrences} times)` : '';
    if (f.observationType === 'test_sequence') {
      const state = reachedState(f.page, f.target);
      return {
        content: `To reach ${state}, follow: ${f.before.join(' → ')}${seen}.`,
        citationText: `e2e test_sequence: ${state}`,
      };
    }
    const step = f.target === null ? f.action : `${f.action} ${JSON.stringify(f.target)}`;
    const where = f.page === null ? '' : ` on ${f.page}`;
    const lead: Record<Exclude<typeof f.observationType, 'test_sequence'>, string> = {
      precondition: `Before ${step}${where}, do: ${f.before.join(', ')}.`,
      timing: `Timing${where}: ${step} needs time.`,
      ui_behavior: `UI behaviour${where} after ${step}:`,
      mcp_gotcha: `MCP gotcha: ${f.mcpTool} ${step}${where} fails.`,
    };
    return {
      content: `${lead[f.observationType]} Observed: ${f.outcome}${seen}.`,
      citationText: `e2e ${f.observationType}: ${step}${where}`,
    };
  },
  remember_request: (f) => ({ content: f.text, citationText: f.text }),
  consolidated_insight: (f) => ({ content: f.text, citationText: f.text }),
};

function code(text: string): string {
  return `\`${text}\``;
}

/** ` Label: a, b.` — or nothing when there is nothing to say. */
function sentence(
  label: string,
  items: readonly string[] | string | null,
  separator = ', ',
): string {
  const values = items === null ? [] : typeof items === 'string' ? [items] : items;
  return values.length === 0 ? '' : ` ${label}: ${values.join(separator)}.`;
}

function list(label: string, files: readonly string[]): string {
  return files.length === 0 ? '' : `${label}: ${files.map(code).join(', ')}`;
}

function duration(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

function dominantCause(causes: Partial<Record<string, number>>): string {
  const ranked = Object.entries(causes).sort(
    (a, b) => (b[1] ?? 0) - (a[1] ?? 0) || (a[0] < b[0] ? -1 : 1),
  );
  return (ranked[0]?.[0] ?? 'wrong_assumption').replace(/_/g, ' ');
}
