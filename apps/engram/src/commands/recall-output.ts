import { recallInWorkingTree, type Provenance, type RecallQuery } from '@engram/core';
import {
  episodeItem,
  memoryItem,
  replacedMessages,
  scoreMessage,
  turnItem,
  type RecallAnswer,
  type RecallHit,
} from '@engram/app-retrieval';
import { resolve } from 'node:path';
import { workingTreeCheck } from '../working-tree';
import { oneLine } from './cli-text';

/** One JSON line of `engram recall --json` / `--queries` output. */
export interface RecallJsonLine {
  id: unknown;
  query: string;
  tenant: string | null;
  project: string;
  phase: string;
  k: number;
  tier: string;
  embeddingModel: string;
  tookMs: number;
  results: RecallJsonResult[];
}

export interface RecallJsonResult {
  rank: number;
  tier: string;
  id: string;
  /** The memory type; `episode` / `turn` for the other tiers. */
  type: string;
  text: string;
  score: number;
  scores: ReturnType<typeof scoreMessage>;
  explanation: string;
  provenance: Provenance;
  memory?: ReturnType<typeof memoryItem>;
  episode?: ReturnType<typeof episodeItem>;
  turn?: ReturnType<typeof turnItem>;
  /**
   * The outdated memories a memory result replaces (superseded or stale, prefixed and penalised),
   * best first: shown as its history, not as results of their own. Empty for the other tiers.
   */
  replaces: ReturnType<typeof replacedMessages>;
}

export function recallJsonLine(
  id: unknown,
  answer: RecallAnswer,
  tenant: string | null,
): RecallJsonLine {
  const { query }: { query: RecallQuery } = answer;
  return {
    id,
    query: query.query,
    tenant,
    project: query.scope.projectId,
    phase: query.phase,
    k: query.k,
    tier: query.tiers.length === 1 ? query.tiers[0] : 'all',
    embeddingModel: answer.embeddingModel,
    tookMs: Math.round(answer.timings.totalMs * 10) / 10,
    results: answer.results.map((hit, index) => recallJsonResult(hit, index + 1)),
  };
}

function recallJsonResult(hit: RecallHit, rank: number): RecallJsonResult {
  const common = {
    rank,
    tier: hit.tier,
    id: hit.id,
    text: hit.text,
    score: hit.score.finalScore,
    scores: scoreMessage(hit.score),
    explanation: hit.explanation,
    provenance: hit.provenance,
    replaces: replacedMessages(hit),
  };
  switch (hit.tier) {
    case 'memories':
      return { ...common, type: hit.memory.memory.memoryType, memory: memoryItem(hit.memory) };
    case 'episodes':
      return { ...common, type: 'episode', episode: episodeItem(hit.episode) };
    case 'turns':
      return { ...common, type: 'turn', turn: turnItem(hit.turn, hit.provenance) };
  }
}

/**
 * The answer with each memory about files that are all gone from the working tree at `dir`
 * marked stale (seed 002 §7 layer 1: an explicit search still shows it, marked; the store cannot
 * stat the asker's files). Without `dir`, as it came: `engram recall` names a project by id and
 * may run anywhere.
 */
export function recallLineInWorkingTree(line: RecallJsonLine, dir?: string): RecallJsonLine {
  const check = workingTreeCheck(dir === undefined ? undefined : resolve(dir));
  if (check === null) return line;
  return { ...line, results: recallInWorkingTree(line.results, check).answer };
}

/** The answer for people: rank, tier/type, score, text, and where it came from. */
export function formatRecall(line: RecallJsonLine): string {
  if (line.results.length === 0) {
    return line.tenant === null
      ? `no data for project ${line.project} yet`
      : `nothing recalled for "${line.query}" in ${line.project}`;
  }
  const rows = line.results.flatMap((result) => {
    const p = result.provenance;
    const source = [
      p.sessionIds.length ? `sessions ${p.sessionIds.join(',')}` : '',
      p.episodeIds.length ? `episodes ${p.episodeIds.join(',')}` : '',
      p.promptIds.length ? `prompts ${p.promptIds.slice(0, 10).join(',')}` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    return [
      `${String(result.rank).padStart(2)}. ${result.score.toFixed(4)}  [${result.tier}/${result.type}] ${oneLine(result.text, 160)}`,
      ...result.replaces.map((old) => `    replaces: ${oneLine(old.content, 160)}`),
      `    from ${source || 'unknown'}`,
    ];
  });
  return [`recall "${line.query}" in ${line.project} (phase ${line.phase}):`, ...rows].join('\n');
}
