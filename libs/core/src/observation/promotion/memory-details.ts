import type { Memory, WorkUnitRef } from '@engram/contracts';
import { NO_MEMORY_DETAILS, type MemoryDetails } from '../../memory';
import type { CandidateFacts, MemoryCandidate } from '../candidates';

type Facts<K extends CandidateFacts['kind']> = Extract<CandidateFacts, { kind: K }>;
type DetailBuilders = {
  [K in CandidateFacts['kind']]?: (
    facts: Facts<K>,
    candidate: MemoryCandidate,
    workUnitRef: WorkUnitRef | null,
  ) => Partial<MemoryDetails>;
};

/** The type-specific extras of seed 002 §4 (the one matching the type set, the others null). */
export function memoryDetails(
  candidate: MemoryCandidate,
  workUnitRef: WorkUnitRef | null,
): MemoryDetails {
  const build = DETAIL_BUILDERS[candidate.facts.kind] as
    | ((
        facts: CandidateFacts,
        c: MemoryCandidate,
        ref: WorkUnitRef | null,
      ) => Partial<MemoryDetails>)
    | undefined;
  return { ...NO_MEMORY_DETAILS, ...(build?.(candidate.facts, candidate, workUnitRef) ?? {}) };
}

const DETAIL_BUILDERS: DetailBuilders = {
  dead_end: (f, candidate, workUnitRef) => ({
    deadEnd: {
      approachTried: `changing ${f.approachFiles.join(', ')} (${f.stepsSpent} steps)`,
      whyItFailed:
        f.errorsSeen.length > 0
          ? f.errorsSeen.join('; ')
          : 'abandoned and reverted; no error was recorded',
      alternativeUsed: f.alternativeFiles.length > 0 ? f.alternativeFiles.join(', ') : 'unknown',
      taskContext: workUnitRef?.label ?? candidate.relatedModules.join(', '),
    },
  }),
  workflow_recipe: (f) => ({
    workflowRecipe: {
      taskPattern: `work in ${f.module}: ${f.toolSequence.join(' → ')}`,
      steps: f.steps.map((step, i) => ({
        order: i + 1,
        description: step.file === null ? step.tool : `${step.tool} ${step.file}`,
        canonicalFile: step.file,
        canonicalLine: null,
      })),
      lastValidatedAt: f.lastValidatedAt,
      successCount: f.sessionCount,
    },
  }),
  context_cost: (f) => ({
    contextCost: {
      module: f.module,
      averageTokensPerSession: f.averageTokens,
      p90TokensPerSession: f.p90Tokens,
      sampleCount: f.sampleCount,
    },
  }),
  prefetch_pattern: (f) => ({
    prefetchPattern: {
      alwaysReadFiles: f.alwaysReadFiles,
      frequentlyReadFiles: f.frequentlyReadFiles,
      moduleTrigger: f.module,
      sessionCount: f.sessionCount,
    },
  }),
  e2e_observation: (f) => ({
    e2eObservation: {
      observationType: f.observationType,
      mcpToolUsed: f.mcpTool,
      appState: f.page,
    },
  }),
  task_calibration: (f) => ({
    taskCalibration: {
      module: f.module,
      methodology: f.methodology,
      averageActualSteps: f.averageActualSteps,
      averagePlannedSteps: f.averagePlannedSteps,
      ratio: f.ratio,
      sampleCount: f.sampleCount,
    },
  }),
};

/** A causal dependency requires both of its files (seed 002 §4: `targetFilePath` relations). */
export function memoryRelations(candidate: MemoryCandidate): Memory['relations'] {
  if (candidate.facts.kind !== 'causal_dependency') return [];
  const confidence = Math.min(1, Math.max(0, candidate.facts.weight));
  return [candidate.facts.fileA, candidate.facts.fileB].map((file) => ({
    targetMemoryId: null,
    targetFilePath: file,
    relationType: 'required_with' as const,
    confidence,
    autoExtracted: true,
  }));
}
