import { DEFAULT_RANKING_CONFIG } from '@engram/core';
/**
 * Recall quality (issue #23): the LoCoMo-style dev set of recall/dataset.ts replayed into an
 * embedded data dir the way `engram replay --file F --wait --data-dir D` does (the same
 * services, the same replay and wait code, in this process), then asked with the code of
 * `engram recall --queries Q --json --no-track --data-dir D [--tier T]` (runRecallBatch on the
 * embedded store). Every answer is scored by provenance against the turns that stated the fact
 * (evidence recall@5/@10, MRR), beside plain BM25 over the same raw turns.
 */
import { loadConfig } from '@engram/config';
import { SqliteRetrievalStore } from '@engram/embedded';
import { Logger } from '@nestjs/common';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { startEmbeddedServices } from '../../../apps/engram/src/embedded-services';
import { runRecallBatch } from '../../../apps/engram/src/commands/recall-answer';
import { embeddedRecallDeps } from '../../../apps/engram/src/commands/recall.command';
import type { RecallJsonLine } from '../../../apps/engram/src/commands/recall-output';
import { runReplay, serviceGroups } from '../../../apps/engram/src/commands/replay.command';
import { embeddedTarget } from '../../../apps/engram/src/commands/replay-targets';
import { createRecallStack } from '../../../apps/retrieval/src/retrieval-backend';
import { sqliteBackend } from '../../../apps/retrieval/src/sqlite-backend';
import {
  embeddedEmbedder,
  LEXICAL_ONLY_EMBEDDER,
} from '../../../apps/retrieval/src/retrieval-embedders';
import {
  buildRecallDevSet,
  type BenchQuestion,
  type BenchTurn,
  type RecallDevSetOptions,
} from './recall/dataset';
import {
  meanEvidence,
  scoreEvidence,
  turnAsResult,
  TurnBm25,
  type EvidenceScores,
  type ResultProvenance,
} from './recall/score';
import type { QualityOptions, QualityRow, QualityRunner } from './types';

const FULL: RecallDevSetOptions = {
  users: 10,
  dialoguesPerUser: 8,
  chitChatPerUser: 2,
  questionsPerDialogue: 2,
  seed: 23,
};
const QUICK: RecallDevSetOptions = {
  users: 2,
  dialoguesPerUser: 3,
  chitChatPerUser: 1,
  questionsPerDialogue: 2,
  seed: 23,
};
const DATASET = 'sgd+tiage/locomo-style';

/** The tiers measured: `all` is what `engram recall` returns by default. */
const TIERS = [
  { tier: 'all', method: 'engram all tiers' },
  { tier: 'turns', method: 'engram turns tier' },
  { tier: 'episodes', method: 'engram episodes tier' },
  { tier: 'memories', method: 'engram memories tier' },
] as const;

function rowOf(method: string, baseline: boolean, scores: EvidenceScores): QualityRow {
  return {
    area: 'recall',
    dataset: DATASET,
    method,
    baseline,
    metrics: {
      'recall@5': scores.recall5,
      'recall@10': scores.recall10,
      MRR: scores.mrr,
      'recall@10 turns': scores.recall10Turns,
      'cited turns/result': scores.citedTurns5,
    },
  };
}

/** Collects what a stream is written. */
function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

export const runRecallQuality: QualityRunner = async (options: QualityOptions) => {
  const set = buildRecallDevSet(options.datasetsDir, options.quick ? QUICK : FULL);
  const turnsById = new Map<string, BenchTurn>();
  for (const turns of set.turns.values()) {
    for (const turn of turns) turnsById.set(turn.eventId, turn);
  }
  const evidenceOf = (q: BenchQuestion) => q.evidence.map((id) => turnsById.get(id) as BenchTurn);
  const notes: string[] = [];
  const kinds = new Map<string, number>();
  for (const q of set.questions) kinds.set(q.kind, (kinds.get(q.kind) ?? 0) + 1);
  notes.push(
    `${DATASET}: ${set.turns.size} user histories (projects), ${turnsById.size} user turns, ` +
      `${set.questions.length} questions (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}); ` +
      'evidence = the user turns that stated the asked slot value; k = 10, --no-track; ' +
      '"recall@10 turns" = evidence within the first 10 turns the results cite (a result citing ' +
      'a whole conversation costs all its turns)',
  );

  // Baseline: plain BM25 over the raw turns of the asker's history.
  const bm25 = new Map([...set.turns].map(([project, turns]) => [project, new TurnBm25(turns)]));
  const baseline = set.questions.map((q) =>
    scoreEvidence(bm25.get(q.projectId)!.search(q.query, 10).map(turnAsResult), evidenceOf(q)),
  );
  const rows: QualityRow[] = [rowOf('baseline: BM25 over turns', true, meanEvidence(baseline))];

  // engram replay --wait into an embedded data dir.
  const dataDir = join(options.workDir, 'recall-data');
  const config = loadConfig();
  Logger.overrideLogger(['error']);
  const embedder = options.quick
    ? LEXICAL_ONLY_EMBEDDER
    : await embeddedEmbedder({ warn: (message) => options.log(message) });
  if (embedder === LEXICAL_ONLY_EMBEDDER) {
    notes.push(
      options.quick
        ? 'quick: BM25 only (no kNN, no model)'
        : 'the embedding model is not installed (`npm run models:setup`): BM25 only, no kNN',
    );
  }
  const replayStarted = Date.now();
  const services = await startEmbeddedServices({
    config,
    dataDir,
    sweepIntervalMs: 100,
    llm: null,
    retrievalEmbedder: embedder,
  });
  const target = await embeddedTarget(config, dataDir);
  try {
    const replay = await runReplay({
      config,
      content: set.events,
      target,
      errors: process.stderr,
      wait: { groups: serviceGroups(config), timeoutMs: 600_000 },
    });
    if (replay.caughtUp !== true || replay.rejected > 0) {
      throw new Error(`replay: ${replay.rejected} rejected, caught up: ${replay.caughtUp}`);
    }
  } finally {
    await target.close();
    await services.stop();
  }
  options.log(
    `  recall: replayed ${set.events.split('\n').length - 1} events in ${Date.now() - replayStarted} ms`,
  );

  // engram recall --queries Q --json --no-track [--tier T]
  const store = SqliteRetrievalStore.open({ dataDir });
  const stack = createRecallStack({
    ranking: DEFAULT_RANKING_CONFIG,
    backend: sqliteBackend(store),
    embedder,
  });
  const queries = set.questions
    .map((q) => JSON.stringify({ id: q.id, query: q.query, project: q.projectId, k: 10 }))
    .join('\n');
  try {
    for (const { tier, method } of TIERS) {
      if (options.quick && tier !== 'all') continue;
      const out = sink();
      const errors = sink();
      const summary = await runRecallBatch(
        embeddedRecallDeps(store, stack),
        queries,
        { tier, track: false },
        out.stream,
        errors.stream,
      );
      if (summary.failed > 0) throw new Error(`recall --tier ${tier}: ${errors.text()}`);
      const lines = out
        .text()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as RecallJsonLine);
      const scores = set.questions.map((q, i) =>
        scoreEvidence(
          lines[i].results.map((r): ResultProvenance => r.provenance),
          evidenceOf(q),
        ),
      );
      rows.push(rowOf(method, false, meanEvidence(scores)));
      if (tier === 'all') {
        const byTier = new Map<string, number>();
        for (const line of lines) {
          for (const r of line.results.slice(0, 5)) {
            byTier.set(r.tier, (byTier.get(r.tier) ?? 0) + 1);
          }
        }
        const slots = lines.length * 5;
        notes.push(
          `top-5 slots of all tiers: ${[...byTier].map(([t, n]) => `${t} ${((100 * n) / slots).toFixed(0)} %`).join(', ')}`,
        );
        for (const kind of kinds.keys()) {
          const of = scores.filter((_, i) => set.questions[i].kind === kind);
          const m = meanEvidence(of);
          notes.push(
            `all tiers, ${kind}: recall@5 ${m.recall5.toFixed(3)}, recall@10 ${m.recall10.toFixed(3)}, MRR ${m.mrr.toFixed(3)}`,
          );
        }
      }
    }
  } finally {
    await stack.access.close().catch(() => undefined);
    store.close();
  }
  return { area: 'recall', rows, notes };
};
