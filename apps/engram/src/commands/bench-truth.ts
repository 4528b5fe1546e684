import { SCHEMA_VERSION, type LifecycleEvent, type Memory, type Typed } from '@engram/contracts';
import { parseConfig, type EngramConfig } from '@engram/config';
import { parseRememberRequest, rememberRequestedEvent, userTaughtMemory } from '@engram/core';
import { SqliteEventLogAdapter } from '@engram/embedded';
import { contractCodec } from '@engram/kafka';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedServices, type EmbeddedServices } from '../embedded-services';
import { serviceGroups, waitForServices } from './replay.command';
import { embeddedTarget } from './replay-targets';
import {
  baselineOutcome,
  injectedStale,
  meetsTargets,
  scoreTruth,
  TOP_K,
  TRUTH_TARGETS,
  type ProjectOutcome,
  type RankedKey,
  type TruthScores,
  unmetTargets,
} from './bench-truth-score';
import {
  FACT_KINDS,
  isCommit,
  TRUTH_TENANT,
  truthWorld,
  type TruthCommit,
  type TruthNote,
  type TruthProject,
} from './bench-truth-world';

// `engram bench truth` (issue #20): truth over time on embedded Engram, in this process (the
// SQLite log, the observer, the retrieval indexer and store; no servers, no model: BM25 only).
// Each generated project is taught its first facts (Remember by a person: the RememberRequested
// event and the user_taught memory on the log, as RememberService publishes them), asked about
// them (so the old facts are used, counted as accessed), then changed: a CommitMade renames one
// file and deletes another; newer notes reverse a decision, swap a dependency, replace a
// convention, correct a gotcha, add a compatible fact. Then every question asks for the current
// fact (Recall), every file involved is opened (InjectForFile), every question builds a context
// (BuildContext). Beside it, in the same run, the baseline: plain BM25 over every note taught.

export interface TruthBench {
  benchmark: 'truth';
  seed: number;
  projects: number;
  questions: number;
  seconds: number;
  engram: TruthScores;
  baseline: TruthScores;
  targets: typeof TRUTH_TARGETS;
  targetsMet: boolean;
}

const BENCH_USER = 'bench-truth-user';
const SESSION = 'bench-truth-session';

export async function benchTruth(options: {
  projects: number;
  seed: number;
  log?: (line: string) => void;
}): Promise<TruthBench> {
  const started = performance.now();
  // The services' start-up lines say nothing about the figures.
  Logger.overrideLogger(['error']);
  const config = parseConfig({});
  const world = truthWorld(options.seed, options.projects, Date.now());
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-truth-'));
  const dataDir = join(dir, 'data');
  const services = await startEmbeddedServices({
    config,
    dataDir,
    sweepIntervalMs: 100,
    llm: null,
    retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
  });
  try {
    const port = new SqliteEventLogAdapter(services.log);
    const keys = new Map<string, string>();
    for (const project of world) await teach(port, project, project.before, keys);
    await settle(config, dataDir);
    options.log?.(`taught ${keys.size} notes in ${world.length} projects`);
    for (const project of world) {
      for (const query of project.uses) await recallKeys(services, project, query, keys, true);
    }
    await services.retrieval.recall.access.flush();
    for (const project of world) {
      for (const change of project.changes) {
        if (isCommit(change)) await commit(port, project, change);
        else await teach(port, project, [change], keys);
      }
    }
    await settle(config, dataDir);
    options.log?.('changes processed; asking');
    const outcomes: ProjectOutcome[] = [];
    for (const project of world) outcomes.push(await ask(services, project, keys));
    const contextMemories = config.ranking.context.maxMemories;
    const engram = scoreTruth(outcomes);
    const baseline = scoreTruth(world.map((p) => baselineOutcome(p, contextMemories)));
    return {
      benchmark: 'truth',
      seed: options.seed,
      projects: world.length,
      questions: engram.queries,
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
      engram,
      baseline,
      targets: TRUTH_TARGETS,
      targetsMet: meetsTargets(engram),
    };
  } finally {
    await services.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Notes as Remember publishes a person's: the RememberRequested event, then the memory. */
async function teach(
  port: SqliteEventLogAdapter,
  project: TruthProject,
  notes: readonly TruthNote[],
  keys: Map<string, string>,
): Promise<void> {
  const events: LifecycleEvent[] = [];
  const memories: Typed<'Memory'>[] = [];
  for (const note of notes) {
    const request = parseRememberRequest({
      tenantId: TRUTH_TENANT,
      projectId: project.projectId,
      userId: BENCH_USER,
      text: note.text,
      type: note.memoryType,
      relatedFiles: note.relatedFiles,
    });
    const event = rememberRequestedEvent(request, note.at);
    const memory: Memory = userTaughtMemory(request, event);
    keys.set(memory.memoryId, note.key);
    events.push(event);
    memories.push({ type: 'Memory', ...memory });
  }
  await port.publish(contractCodec('agent.lifecycle.v1'), events);
  await port.publish(contractCodec('memory.memories.v1'), memories);
}

async function commit(
  port: SqliteEventLogAdapter,
  project: TruthProject,
  change: TruthCommit,
): Promise<void> {
  const event: Typed<'CommitMade'> = {
    type: 'CommitMade',
    eventId: `bench-truth-${project.projectId}-${change.key}`,
    tenantId: TRUTH_TENANT,
    projectId: project.projectId,
    sessionId: SESSION,
    agentId: 'bench-truth-agent',
    userId: null,
    timestamp: change.at,
    schemaVersion: SCHEMA_VERSION,
    sha: change.sha,
    changedFiles: [],
    renamedFiles: change.renamed,
    deletedFiles: change.deleted,
    message: change.message,
    branch: 'main',
  };
  await port.publish(contractCodec('agent.lifecycle.v1'), [event as LifecycleEvent]);
}

async function recallKeys(
  services: EmbeddedServices,
  project: TruthProject,
  query: string,
  keys: ReadonlyMap<string, string>,
  track: boolean,
): Promise<RankedKey[]> {
  const answer = await services.retrieval.recall.service.recall({
    tenantId: TRUTH_TENANT,
    projectId: project.projectId,
    query,
    tier: 'memories',
    k: TOP_K,
    track,
  });
  const keyOf = (memoryId: string) => keys.get(memoryId) ?? '';
  return answer.results.flatMap((hit) =>
    hit.tier === 'memories'
      ? [
          {
            key: keyOf(hit.memory.memory.memoryId),
            marked: hit.memory.stale,
            history: (hit.replaces ?? []).map((replaced) => keyOf(replaced.memoryId)),
          },
        ]
      : [],
  );
}

async function ask(
  services: EmbeddedServices,
  project: TruthProject,
  keys: ReadonlyMap<string, string>,
): Promise<ProjectOutcome> {
  const scope = { tenantId: TRUTH_TENANT, projectId: project.projectId };
  const { context } = services.retrieval.recall;
  const queries: ProjectOutcome['queries'] = [];
  for (const query of project.queries) {
    const ranked = await recallKeys(services, project, query.query, keys, false);
    const built = await context.buildContext({ ...scope, sessionId: SESSION, query: query.query });
    const inContext = built.items.flatMap((item) =>
      item.kind === 'memory' && item.provenance.memoryId !== null
        ? [keys.get(item.provenance.memoryId) ?? '']
        : [],
    );
    queries.push({ query, ranked, context: inContext });
  }
  const files: ProjectOutcome['files'] = [];
  for (const file of project.files) {
    const selection = await context.injectForFile({ ...scope, filePath: file.path });
    files.push({
      file,
      injected: selection.memories.map((m) => keys.get(m.memory.memoryId) ?? ''),
    });
  }
  return { project, queries, files };
}

/** Until every service has processed the whole log and nothing new arrived for a moment. */
async function settle(config: EngramConfig, dataDir: string): Promise<void> {
  const target = await embeddedTarget(config, dataDir);
  try {
    for (let round = 0; round < 3; round += 1) {
      const caughtUp = await waitForServices(target, {
        groups: serviceGroups(config),
        timeoutMs: 120_000,
      });
      if (!caughtUp) throw new Error('the embedded services did not catch up in 120 s');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  } finally {
    await target.close();
  }
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

export function formatTruthBench(result: TruthBench): string {
  const row = (name: string, s: TruthScores) =>
    `  ${name.padEnd(26)}${s.top1.toFixed(3).padEnd(9)}${pct(s.staleInTop5).padEnd(17)}` +
    `${pct(s.unmarkedStaleInTop5).padEnd(19)}${String(s.staleAboveCurrent).padEnd(15)}` +
    `${String(s.shownAsHistory).padEnd(17)}${s.injectedStaleForFile} / ${s.injectedStaleInContext}`;
  const kinds = FACT_KINDS.map(
    (k) =>
      `    ${k.padEnd(22)}${result.engram.byKind[k].top1.toFixed(2)} | ` +
      `${result.baseline.byKind[k].top1.toFixed(2)}  (${result.engram.byKind[k].queries} questions)`,
  );
  const unmet = unmetTargets(result.engram);
  return [
    `truth over time: ${result.projects} projects (seed ${result.seed}), ${result.questions} questions, ` +
      `${result.seconds} s (embedded, in process, BM25 only)`,
    `  ${''.padEnd(26)}top-1    stale in top-5   of which unmarked  above current  ` +
      `shown as history injected stale (InjectForFile / BuildContext)`,
    row('engram', result.engram),
    row('baseline: plain BM25', result.baseline),
    `  ${'targets'.padEnd(26)}≥ ${TRUTH_TARGETS.top1}   ≤ ${pct(TRUTH_TARGETS.staleInTop5).padEnd(66)}` +
      `${TRUTH_TARGETS.injectedStale}`,
    `  top-1 by kind (engram | baseline):`,
    ...kinds,
    ...truthNotes(result.engram),
    unmet.length === 0 ? '  targets met' : `  targets NOT met: ${unmet.join(', ')}`,
  ].join('\n');
}

/**
 * What the stale figures count (issue #20). An explicit search shows stale and superseded
 * memories (SPEC §7: penalised and prefixed), as the history of the current fact they belong to
 * (folded under it, libs/core outdated-folding.ts), so they take no result slot; "stale in top-5"
 * counts the outdated memories that still do: those with no current fact in the answer to fold
 * into, and those shown as current (never detected as replaced).
 */
export function truthNotes(scores: TruthScores): string[] {
  const marked = scores.staleInTop5 - scores.unmarkedStaleInTop5;
  return [
    `  stale in top-5 counts the outdated memories among the first five results (what takes a`,
    `    result slot), as issue #20 defines it. An explicit search still shows outdated memories`,
    `    (SPEC §7: with the confidence penalty and the [STALE …] / [SUPERSEDED …] prefix), but as`,
    `    the history of the current fact they belong to ("replaces:" under it): ` +
      `${scores.shownAsHistory} shown as history,`,
    `    ${scores.historyUnderCurrent} of them under the question's current fact. ` +
      `${pct(marked)} of the results are outdated memories`,
    `    with no current fact in the answer to fold into, shown marked ` +
      `(outdated above the current fact: ${scores.staleAboveCurrent});`,
    `    ${pct(scores.unmarkedStaleInTop5)} are outdated memories shown as current, ` +
      `which Engram did not detect as replaced.`,
    `  injected stale: InjectForFile and BuildContext refuse every memory known to be stale or`,
    injectedStale(scores) === 0
      ? `    superseded (one guard, libs/core injection-guard.ts); none was injected.`
      : `    superseded (one guard, libs/core injection-guard.ts); the ${injectedStale(scores)} counted ` +
        `were never\n    detected as outdated (no stale mark, no supersession), so the guard cannot know them.`,
  ];
}
