import { loadConfig } from '@engram/config';
import type { Episode, Memory } from '@engram/contracts';
import type { GraphCoAccessNeighbour } from '@engram/core';
import type { SqliteEventLog, SqliteObserverGraph } from '@engram/embedded';
import type { Command } from 'commander';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedServices } from '../embedded-services';
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

/**
 * `engram demo`: Engram embedded, end to end, on a shipped recorded session — no servers. Replays
 * it into a fresh data directory, waits until the segmenter has processed it, prints the episodes.
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
  const config = loadConfig();
  const started = process.hrtime.bigint();
  const services = await startEmbeddedServices({ config, dataDir, sweepIntervalMs: 100 });
  const { log } = services;
  const target = await embeddedTarget(config, dataDir);
  let episodes: Episode[];
  let published: number;
  let together: [string, GraphCoAccessNeighbour][];
  let memories: Memory[];
  try {
    const content = readFileSync(DEMO_SESSION, 'utf8');
    const summary = await runReplay({
      config,
      content,
      target,
      errors: process.stderr,
      wait: { groups: serviceGroups(config, 'embedded'), timeoutMs: 60_000 },
    });
    published = summary.published;
    // SessionEnded closes the last episode on the timer, once the session's inputs are in.
    episodes = await episodesWhenEnded(log, 10_000);
    together = await filesWorkedOnTogether(services.graph, episodes);
    memories = [...log.replay('memory.memories.v1')].map(
      (record) => JSON.parse(String(record.value)) as Memory,
    );
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
  console.log(`\nMemories promoted by the observer (${memories.length}):`);
  for (const memory of memories) console.log(`    [${memory.memoryType}] ${memory.content}`);
  if (memories.length === 0) {
    console.log(
      '    none yet: behavioural patterns need the same work in 3 or more sessions, and this\n' +
        '    recording is one session. Distilled facts and recall come with issues #5 and #6.',
    );
  }
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
    const episodes = [...log.replay('memory.episodes.v1')].map(
      (record) => JSON.parse(String(record.value)) as Episode,
    );
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
  ].join('\n');
}
