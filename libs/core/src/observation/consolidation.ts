import type { WorkUnitRef } from '@engram/contracts';
import type { MemoryCandidate } from './candidates';
import type { ObserverSettings } from './observer-settings';
import { moduleOf } from './project-paths';
import { observedMemoryId } from './promotion/memory-builder';
import type { RankedCandidate } from './promotion/promotion-pipeline';
import type { Scratchpad } from './scratchpad';
import type { SegmentDigest } from './segment-digest';

const MAX_INSIGHTS = 5;
const MAX_RELATED_FILES = 50;
/** Seed 002 §8 stores consolidated insights at confidence 0.85. */
const CONSOLIDATION_CONFIDENCE = 0.85;

type InsightKind =
  'hotspot_modules' | 'hotspot_files' | 'module_coupling' | 'recurring_errors' | 'fragile_files';

interface Insight {
  kind: InsightKind;
  text: string;
  files: string[];
}

/**
 * The consolidation pass after a spec of ≥ 10 subtasks (seed 002 §8): 2–5 global module_insight
 * memories about the project, from the digests of the validated subtasks — where the changes
 * landed, which files kept changing, which modules moved together, which errors and fragile
 * files recurred. Deterministic (a Synthesiser may reword them in `promoteRanked`). The first two
 * exist whenever a subtask edited anything; without edits there is nothing to consolidate.
 */
export function consolidationCandidates(
  pad: Scratchpad,
  now: number,
  settings: ObserverSettings,
): RankedCandidate[] {
  const subtasks = pad.segments.filter(
    (s) => s.status === 'promoted' && s.digest !== null && s.workUnitRef !== null,
  );
  const digests = subtasks.map((s) => s.digest!);
  const spec = pad.workUnitRoot;
  const label = spec?.label ?? 'the spec';
  const insights = [
    hotspotModules(digests, label, settings.moduleDepth),
    hotspotFiles(digests),
    moduleCoupling(digests),
    recurringErrors(digests),
    fragileFiles(digests),
  ].filter((insight): insight is Insight => insight !== null);
  if (insights.length === 0) return [];
  const allFiles = [...new Set(digests.flatMap((d) => Object.keys(d.edits)))]
    .sort()
    .slice(0, MAX_RELATED_FILES);
  const sessionIds = [...pad.sessionIds].sort();
  return insights
    .slice(0, MAX_INSIGHTS)
    .map((insight) => candidateOf(pad, spec, insight, allFiles, sessionIds, now, settings));
}

function candidateOf(
  pad: Scratchpad,
  spec: WorkUnitRef | null,
  insight: Insight,
  allFiles: string[],
  sessionIds: string[],
  now: number,
  settings: ObserverSettings,
): RankedCandidate {
  const root = spec?.hierarchy[0] ?? pad.scratchpadId;
  const naturalKey = `consolidation\u0000${root}\u0000${insight.kind}`;
  const relatedFiles = insight.files.length > 0 ? insight.files : allFiles;
  const candidate: MemoryCandidate = {
    key: `module_insight:${naturalKey}`,
    memoryType: 'module_insight',
    naturalKey,
    rule: 'consolidation',
    signalType: 'session_stats',
    source: 'observer_inferred',
    scope: 'global',
    frequency: 1,
    lastObservedAt: now,
    relatedFiles,
    relatedModules: [...new Set(relatedFiles.map((f) => moduleOf(f, settings.moduleDepth)))].sort(),
    evidence: { sessionIds, eventIds: [], latest: null },
    facts: { kind: 'consolidated_insight', insightKind: insight.kind, text: insight.text },
  };
  return {
    ...candidate,
    memoryId: observedMemoryId(pad.tenantId, pad.projectId, candidate),
    draft: { content: insight.text, citationText: insight.text.slice(0, 120) },
    breakdown: {
      frequency: 1,
      recency: 1,
      novelty: 1,
      maxCosine: null,
      nearestMemoryId: null,
      score: CONSOLIDATION_CONFIDENCE,
      threshold: settings.scoreThreshold,
    },
  };
}

/** Per key: how many subtasks had it and the total count. */
function tally(
  maps: ReadonlyArray<Record<string, number>>,
): Array<{ key: string; subtasks: number; total: number }> {
  const byKey = new Map<string, { key: string; subtasks: number; total: number }>();
  for (const map of maps) {
    for (const [key, count] of Object.entries(map)) {
      const entry = byKey.get(key) ?? { key, subtasks: 0, total: 0 };
      entry.subtasks += 1;
      entry.total += count;
      byKey.set(key, entry);
    }
  }
  return [...byKey.values()].sort(
    (a, b) => b.subtasks - a.subtasks || b.total - a.total || (a.key < b.key ? -1 : 1),
  );
}

function hotspotModules(
  digests: readonly SegmentDigest[],
  label: string,
  depth: number,
): Insight | null {
  const perSubtask = digests.map((d) => {
    const modules: Record<string, number> = {};
    for (const [file, edits] of Object.entries(d.edits)) {
      const module = moduleOf(file, depth);
      modules[module] = (modules[module] ?? 0) + edits;
    }
    return modules;
  });
  const top = tally(perSubtask).slice(0, 3);
  if (top.length === 0) return null;
  const list = top
    .map((t) => `\`${t.key}\` (${t.total} edits in ${t.subtasks} subtasks)`)
    .join(', ');
  return {
    kind: 'hotspot_modules',
    text: `Across ${digests.length} subtasks of ${label}, most changes landed in ${list}.`,
    files: [],
  };
}

function hotspotFiles(digests: readonly SegmentDigest[]): Insight | null {
  const top = tally(digests.map((d) => d.edits)).slice(0, 5);
  if (top.length === 0) return null;
  const list = top.map((t) => `\`${t.key}\` (${t.subtasks})`).join(', ');
  return {
    kind: 'hotspot_files',
    text: `Files changed by the most subtasks: ${list}; work in this area usually touches them.`,
    files: top.map((t) => t.key),
  };
}

function moduleCoupling(digests: readonly SegmentDigest[]): Insight | null {
  const top = tally(digests.map((d) => d.modulePairs)).filter((t) => t.subtasks >= 2)[0];
  if (top === undefined) return null;
  const [a, b] = top.key.split('\u0000');
  return {
    kind: 'module_coupling',
    text: `\`${a}\` and \`${b}\` were worked on together in ${top.subtasks} subtasks: a change in one usually involves the other.`,
    files: [],
  };
}

function recurringErrors(digests: readonly SegmentDigest[]): Insight | null {
  const counts = digests.map((d) =>
    Object.fromEntries(Object.entries(d.errors).map(([k, e]) => [k, e.occurrences])),
  );
  const top = tally(counts).filter((t) => t.subtasks >= 2)[0];
  if (top === undefined) return null;
  const error = digests.map((d) => d.errors[top.key]).find((e) => e !== undefined)!;
  return {
    kind: 'recurring_errors',
    text: `The ${error.toolName} error "${error.normalisedError}" recurred in ${top.subtasks} subtasks (${top.total} times): fix its cause rather than retrying.`,
    files: [],
  };
}

function fragileFiles(digests: readonly SegmentDigest[]): Insight | null {
  const top = tally(digests.map((d) => d.backtracks))
    .filter((t) => t.subtasks >= 2)
    .slice(0, 3);
  if (top.length === 0) return null;
  const list = top.map((t) => `\`${t.key}\` (${t.subtasks} subtasks)`).join(', ');
  return {
    kind: 'fragile_files',
    text: `Edits needed immediate correction in ${list}: plan changes there before editing.`,
    files: top.map((t) => t.key),
  };
}

/** After the consolidation memories were written. */
export function markConsolidated(pad: Scratchpad): void {
  pad.consolidated = true;
}
