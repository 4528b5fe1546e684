import { loadConfig } from '@engram/config';
import type { Episode, Memory } from '@engram/contracts';
import type { GraphCoAccessNeighbour } from '@engram/core';
import type { SqliteEventLog, SqliteObserverGraph } from '@engram/embedded';
import type { RecallHit } from '@engram/app-retrieval';
import { Logger } from '@nestjs/common';
import type { Command } from 'commander';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedServices, type EmbeddedServices } from '../embedded-services';
import { installModelOnFirstRun } from '../model-download';
import { runReplay, serviceGroups } from './replay.command';
import { embeddedTarget } from './replay-targets';

/** The shipped recording: one developer's morning with an agent (several tasks, a fix, a correction). */
export const DEMO_SESSION = join(
  __dirname,
  '..',
  '..',
  '..',
  '..',
  'apps',
  'engram',
  'demo',
  'demo-session.jsonl',
);

/** What the demo asks the recorded session afterwards (the user corrected the agent on it). */
export const DEMO_QUESTIONS = [
  'how do we fake time in the refresh tests?',
  'what rate limit did we put on product search?',
];

/**
 * `engram demo`: Engram embedded, end to end, on a shipped recorded session — no servers. Replays
 * it into a fresh data directory, waits until every service has processed it, prints the
 * episodes, the files worked on together, the memories, and recall answers with citations.
 */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('replay a recorded agent session into embedded Engram and show what it found')
    .option('--data-dir <dir>', 'keep the data here (default: a temporary directory, removed)')
    .option('--json', 'print the episodes as JSON lines')
    .action(async (options: { dataDir?: string; json?: boolean }) => {
      const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'engram-demo-'));
      try {
        await runDemo(dataDir, options.json ?? false);
      } finally {
        if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      }
    });
}

async function runDemo(dataDir: string, json: boolean): Promise<void> {
  // The services' start-up and progress logs would bury the demo's output: warnings only.
  Logger.overrideLogger(['warn', 'error']);
  const config = loadConfig();
  await installModelOnFirstRun(config);
  const started = process.hrtime.bigint();
  // The extractive distiller: the demo is the same on every machine, without any LLM.
  const services = await startEmbeddedServices({
    config,
    dataDir,
    sweepIntervalMs: 100,
    llm: null,
  });
  const { log } = services;
  const target = await embeddedTarget(config, dataDir);
  let episodes: Episode[];
  let published: number;
  let together: [string, GraphCoAccessNeighbour][];
  let memories: Memory[];
  let answers: { question: string; results: RecallHit[] }[];
  try {
    const content = readFileSync(DEMO_SESSION, 'utf8');
    const summary = await runReplay({
      config,
      content,
      target,
      errors: process.stderr,
      wait: { groups: serviceGroups(config), timeoutMs: 60_000 },
    });
    published = summary.published;
    // SessionEnded closes the last episode on the timer, once the session's inputs are in.
    episodes = await episodesWhenEnded(log, 10_000);
    together = await filesWorkedOnTogether(services.graph, episodes);
    memories = latestOf<Memory>(log, 'memory.memories.v1');
    answers = await askTheSession(services, episodes);
  } finally {
    await target.close();
    await services.stop();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (json) {
    for (const episode of episodes) console.log(JSON.stringify(episode));
    return;
  }
  console.log(
    `Replayed ${published} events of a recorded Claude Code session ` +
      `(apps/engram/demo/demo-session.jsonl) into embedded Engram in ${seconds.toFixed(1)} s.\n\n` +
      `Episodes found (${episodes.length}):`,
  );
  episodes.forEach((episode, i) => console.log(describeEpisode(episode, i + 1)));
  console.log("\nFiles worked on together (the observer's co-access graph, `engram neighbors`):");
  for (const [file, n] of together) {
    console.log(
      `    ${file} ↔ ${n.file}  weight ${n.weight.toFixed(2)}, ${n.rawCount} time(s) within 3 steps`,
    );
  }
  if (together.length === 0) console.log('    —');
  const distilled = memories.filter((m) => m.source === 'distilled');
  console.log(
    `\nMemories learned (${memories.length}: ${distilled.length} distilled from the episodes, ` +
      `${memories.length - distilled.length} promoted by the observer — its patterns need the ` +
      'same work in 3+ sessions; this recording is one). The most confident:',
  );
  for (const memory of [...memories].sort((a, b) => b.confidence - a.confidence).slice(0, 8)) {
    console.log(`    [${memory.memoryType} ${memory.confidence.toFixed(2)}] ${memory.content}`);
  }
  if (memories.length === 0) console.log('    —');
  const lexicalOnly = services.retrieval.recall.service.embeddingModel === 'none';
  console.log(
    lexicalOnly
      ? '\nRecall (`engram recall`), BM25 only: `engram models install` installs the model for kNN:'
      : '\nRecall (`engram recall`: BM25 and kNN fused, phase-weighted):',
  );
  for (const { question, results } of answers) {
    console.log(`  "${question}"`);
    results.forEach((hit, i) => console.log(describeHit(hit, i + 1, episodes)));
    if (results.length === 0) console.log('    —');
  }
}

/**
 * The demo's questions, once the indexer has caught up with the last episode (closed on the
 * session-end timer, after `replay --wait` returned): the top three answers of each.
 */
async function askTheSession(
  services: EmbeddedServices,
  episodes: Episode[],
): Promise<{ question: string; results: RecallHit[] }[]> {
  if (episodes.length === 0) return [];
  const { tenantId, projectId } = episodes[0];
  const { log, retrieval } = services;
  await caughtUp(log, retrieval.groupId, retrieval.inputs, 10_000);
  const answers = [];
  for (const question of DEMO_QUESTIONS) {
    const answer = await retrieval.recall.service.recall({
      tenantId,
      projectId,
      query: question,
      k: 3,
    });
    answers.push({ question, results: answer.results });
  }
  return answers;
}

async function caughtUp(
  log: SqliteEventLog,
  groupId: string,
  topics: string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const behind = () =>
    topics.some((topic) => {
      const committed = log.committedOffsets(groupId, topic);
      return log.endOffsets(topic).some((end, p) => (committed.get(p) ?? 0) < end);
    });
  while (behind() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One answer with its citation: which episode, which prompts, when. */
function describeHit(hit: RecallHit, rank: number, episodes: Episode[]): string {
  const p = hit.provenance;
  const numbers = p.episodeIds
    .map((id) => episodes.findIndex((e) => e.episodeId === id) + 1)
    .filter((n) => n > 0);
  const at =
    hit.tier === 'turns'
      ? hit.turn.timestamp
      : hit.tier === 'episodes'
        ? hit.episode.startedAt
        : hit.memory.memory.createdAt;
  const citation = [
    numbers.length ? `episode ${numbers.join(', ')}` : '',
    p.promptIds.length ? `prompt ${p.promptIds.join(', ')}` : '',
    `session ${p.sessionIds.join(', ')}`,
    new Date(at).toISOString().slice(11, 16),
  ]
    .filter(Boolean)
    .join(' · ');
  const text = hit.text.replace(/\s+/g, ' ').trim();
  return [
    `    ${rank}. [${hit.tier === 'memories' ? hit.memory.memory.memoryType : hit.tier.slice(0, -1)}] ${text.length > 110 ? `${text.slice(0, 109)}…` : text}`,
    `       cited from ${citation}  (score ${hit.score.finalScore.toFixed(3)})`,
  ].join('\n');
}

/**
 * A compacted topic as its readers see it: the latest value of each key, deleted keys gone (the
 * log keeps every version until compaction: the distiller rewrites episodes with their summary).
 */
function latestOf<T>(log: SqliteEventLog, topic: string): T[] {
  const latest = new Map<string, T | null>();
  for (const record of log.replay(topic)) {
    latest.set(
      String(record.key),
      record.value === null ? null : (JSON.parse(String(record.value)) as T),
    );
  }
  return [...latest.values()].filter((value): value is T => value !== null);
}

/** Each pair of hot files the graph links, once, strongest first. */
async function filesWorkedOnTogether(
  graph: SqliteObserverGraph,
  episodes: Episode[],
): Promise<[string, GraphCoAccessNeighbour][]> {
  if (episodes.length === 0) return [];
  const { tenantId, projectId } = episodes[0];
  const files = [...new Set(episodes.flatMap((e) => e.hotFiles.map((f) => f.path)))];
  const pairs = new Map<string, [string, GraphCoAccessNeighbour]>();
  for (const file of files) {
    for (const n of await graph.topCoAccessNeighbours({ tenantId, projectId, path: file, k: 3 })) {
      const key = [file, n.file].sort().join('|');
      if (!pairs.has(key)) pairs.set(key, [file, n]);
    }
  }
  return [...pairs.values()]
    .sort((a, b) => b[1].weight - a[1].weight || b[1].rawCount - a[1].rawCount)
    .slice(0, 5);
}

async function episodesWhenEnded(log: SqliteEventLog, timeoutMs: number): Promise<Episode[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const episodes = latestOf<Episode>(log, 'memory.episodes.v1');
    if (episodes.some((e) => e.closeReason === 'session_end') || Date.now() > deadline) {
      return episodes.sort((a, b) => a.firstPromptId - b.firstPromptId);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function describeEpisode(episode: Episode, n: number): string {
  const time = (at: number | null) =>
    at === null ? '…' : new Date(at).toISOString().slice(11, 16);
  const files = episode.hotFiles.map((f) => `${f.path} (${f.touches})`).join(', ') || '—';
  return [
    `${String(n).padStart(2)}. ${time(episode.startedAt)}–${time(episode.endedAt)}  ` +
      `prompts ${episode.firstPromptId}–${episode.lastPromptId}  closed by ${episode.closeReason}`,
    `    intent:   ${episode.intent ?? '—'}`,
    `    keywords: ${episode.intentKeywords.slice(0, 8).join(', ')}`,
    `    files:    ${files}`,
    `    tools:    ${episode.toolsUsed.join(', ') || '—'} · failures ${episode.failures} · outcome ${episode.outcome}`,
    ...(episode.summary ? [`    summary:  ${episode.summary}`] : []),
  ].join('\n');
}
