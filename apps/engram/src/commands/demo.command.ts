import { loadConfig } from '@engram/config';
import type { Episode } from '@engram/contracts';
import { segmenterSettings } from '@engram/core';
import { SqliteEventLog } from '@engram/embedded';
import type { Command } from 'commander';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSegmenter } from '../../../segmenter/src/segmenter.embedded';
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
  const log = SqliteEventLog.open({ dataDir });
  const segmenter = await startEmbeddedSegmenter({
    log,
    settings: segmenterSettings(),
    groupId: config.segmenter.groupId,
    partitions: config.segmenter.partitions,
    sweepIntervalMs: 100,
  });
  const target = await embeddedTarget(config, dataDir);
  let episodes: Episode[];
  let published: number;
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
  } finally {
    await target.close();
    await segmenter.stop();
    log.close();
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
  console.log(
    '\nMemories learned and recall with citations come with the observer, distiller and retrieval\n' +
      'services (issues #4–#6); their cores are in libs/core, the services are not built yet.',
  );
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
