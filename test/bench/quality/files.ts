/**
 * File prediction (issue #23 items 1 and 5): after replaying recorded agent sessions, which files
 * will a session touch next? `engram neighbors` (the observer's stage → the embedded SQLite graph
 * → `neighborsReport`, see files/engram.ts) against two plain baselines a user gets without
 * Engram — the project's most-touched files, and raw co-occurrence counts within 3 steps — on
 * the same queries. The protocol is in files/protocol.ts and printed in the notes.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readClaudeCodeSessions } from './files/claude-code';
import { EngramFileGraph, replaySessions } from './files/engram';
import {
  BaselineKnowledge,
  K,
  meanScores,
  queriesOf,
  scoreQuery,
  type FileQuery,
  type QueryKind,
} from './files/protocol';
import type { BenchSession } from './files/sessions';
import { readSweAgentSessions } from './files/swe-agent';
import { syntheticSessions } from './files/synthetic';
import type { QualityOptions, QualityRow, QualityRunner, QualitySection } from './types';

type Method = 'most-frequent' | 'co-occurrence' | 'engram';

const METHOD_NAMES: Record<Method, string> = {
  'most-frequent': 'baseline: most-frequent files',
  'co-occurrence': 'baseline: co-occurrence within 3 steps',
  engram: 'engram neighbors',
};

interface DatasetResult {
  rows: QualityRow[];
  notes: string[];
}

/** Replays one dataset, asking every query of every method at its point of the replay. */
export async function evaluateDataset(
  name: string,
  sessions: readonly BenchSession[],
  dataDir: string,
): Promise<DatasetResult> {
  const knowledge = new BaselineKnowledge(3);
  const graph = new EngramFileGraph(dataDir);
  const seenProjects = new Set<string>();
  const results = new Map<string, ReturnType<typeof scoreQuery>[]>();
  const pending = new Map<string, FileQuery[]>();
  let answersSum = 0;
  let asked = 0;
  const ask = async (query: FileQuery) => {
    const report = await graph.neighbours(query.projectId, query.file, K);
    const predicted: Record<Method, string[]> = {
      'most-frequent': knowledge.mostFrequent(query.projectId, query.file),
      'co-occurrence': knowledge.coOccurrence(query.projectId, query.file),
      engram: report.neighbors.map((n) => n.file),
    };
    answersSum += report.neighbors.length;
    asked += 1;
    for (const method of Object.keys(predicted) as Method[]) {
      const key = `${query.kind}\u0000${method}`;
      const list = results.get(key) ?? [];
      list.push(scoreQuery(predicted[method], query.targets));
      results.set(key, list);
    }
  };
  try {
    await replaySessions(sessions, graph, {
      beforeSession: async (session) => {
        const queries = queriesOf(session, seenProjects.has(session.projectId));
        seenProjects.add(session.projectId);
        pending.set(session.sessionId, queries);
        for (const query of queries.filter((q) => q.afterCall === -1)) await ask(query);
      },
      afterCall: async (session, call, index) => {
        knowledge.observe(session, call);
        for (const query of pending.get(session.sessionId) ?? []) {
          if (query.afterCall === index) await ask(query);
        }
      },
    });
  } finally {
    graph.close();
  }
  const rows: QualityRow[] = [];
  for (const kind of ['online', 'next-session'] as QueryKind[]) {
    for (const method of Object.keys(METHOD_NAMES) as Method[]) {
      const scored = results.get(`${kind}\u0000${method}`) ?? [];
      if (scored.length === 0) continue;
      const s = meanScores(scored);
      rows.push({
        area: 'files',
        dataset: kind === 'online' ? name : `${name}/next-session`,
        method: METHOD_NAMES[method],
        baseline: method !== 'engram',
        metrics: {
          'recall@5': s.recallAt5,
          MRR: s.mrr,
          answered: s.answered,
          answers: s.meanAnswers,
          queries: s.queries,
        },
      });
    }
  }
  const queried = sessions.filter((s) => s.queried);
  const calls = sessions.reduce((sum, s) => sum + s.calls.length, 0);
  const notes = [
    `${name}: ${sessions.length} sessions replayed (${queried.length} queried, ` +
      `${new Set(queried.map((s) => s.projectId)).size} queried projects), ${calls} tool calls; ` +
      `engram answered with ${(answersSum / Math.max(1, asked)).toFixed(1)} files on average over its ${asked} queries`,
  ];
  return { rows, notes };
}

export const runFilePredictionQuality: QualityRunner = async (
  options: QualityOptions,
): Promise<QualitySection> => {
  const rows: QualityRow[] = [];
  const notes: string[] = [
    'protocol: sessions replayed in order through the observer into an embedded graph; ' +
      '"online" queries (rows named by the dataset) come right after a session touches a file ' +
      'for the first time — the file is the query, every other file the session reads or ' +
      'edits later is a target; "next-session" queries come before a session whose project has ' +
      'an earlier session — its first file is the query, its other files the targets. Every ' +
      'method knows only what was replayed before the query. recall@5 = targets in the top 5 / ' +
      'targets; MRR over the top 5; answered = share of queries with >= 1 file; answers = mean ' +
      'files returned; means over queries.',
  ];
  const datasets: [string, () => BenchSession[]][] = [
    ['swe-agent', () => readSweAgentSessions(join(options.datasetsDir, 'swe-agent-trajectories'))],
    [
      'claude-code',
      () => readClaudeCodeSessions(join(options.datasetsDir, 'claude-code-session')).sessions,
    ],
    ['synthetic', () => syntheticSessions(options.quick ? 12 : 60)],
  ];
  notes.push(
    'swe-agent: the 13 code-repository trajectories are queried (4 projects: marshmallow x8, ' +
      'test-repo x3 with function_calling_simple, pydicom, humanevalfix); the 9 ctf__* ones are ' +
      'replayed as noise (each its own project) and never queried. open/create name a file, ' +
      'edit/insert change state.open_file, paths relative to working_dir.',
    'claude-code: the transcript through the importer mapping (engram import); each typed ' +
      'request and the tool calls serving it is one session, in transcript order; Read, Edit, ' +
      'MultiEdit, Write (successful) are the touches.',
    'synthetic: sessions of a 10-module repository (each mostly in one module, a few shared ' +
      'files used everywhere, files of a task used together), seeded.',
  );
  for (const [name, load] of datasets) {
    let sessions: BenchSession[];
    try {
      sessions = load();
    } catch (error) {
      notes.push(`${name}: skipped (${error instanceof Error ? error.message : String(error)})`);
      continue;
    }
    const dataDir = join(options.workDir, `files-${name}`);
    mkdirSync(dataDir, { recursive: true });
    options.log(`  files: ${name} (${sessions.length} sessions)`);
    const result = await evaluateDataset(name, sessions, dataDir);
    rows.push(...result.rows);
    notes.push(...result.notes);
  }
  return { area: 'files', rows, notes };
};

if (require.main === module) {
  // Standalone: node .cache/…/files.js [datasetsDir]
  void (async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { resolve } = await import('node:path');
    const { qualityTable } = await import('./table');
    const workDir = mkdtempSync(join(tmpdir(), 'engram-files-'));
    try {
      const section = await runFilePredictionQuality({
        datasetsDir: process.argv[2] ?? resolve(process.cwd(), '..', 'shared', 'datasets'),
        workDir,
        quick: process.argv.includes('--quick'),
        log: (line) => process.stderr.write(`${line}\n`),
      });
      console.log(qualityTable([section]));
      for (const note of section.notes) console.log(`files: ${note}`);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  })();
}
