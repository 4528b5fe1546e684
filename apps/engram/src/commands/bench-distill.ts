import {
  addPrompt,
  addToolCall,
  distillationToMemories,
  distillationWindow,
  distillExtractively,
  newDistillerSession,
  noteEpisodeClosed,
  noteEpisodeOpened,
  sessionEventsOf,
} from '@engram/core';
import { cpus } from 'node:os';
import {
  compactedSession,
  debuggingSession,
  type RecordedSession,
} from '@engram/app-distiller/testing';

/** What `engram bench distill --json` prints (one JSON object). */
export interface DistillBench {
  benchmark: 'distill';
  method: 'extractive';
  sessions: number;
  episodes: number;
  memories: number;
  seconds: number;
  episodesPerSecond: number;
  memoriesPerSecond: number;
  cores: number;
}

const SCOPE = { tenantId: 'bench', projectId: 'bench/repo' };

/**
 * The distiller's recorded sessions (a debugging session with a failing test, corrections and a
 * decision; a compacted one), copied under fresh session ids: realistic windows, not random text.
 */
function recordedSessions(count: number): RecordedSession[] {
  const start = Date.UTC(2026, 10, 2, 9);
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? debuggingSession(`bench-debug-${i}`, start + i * 60_000, SCOPE)
      : compactedSession(`bench-compact-${i}`, start + i * 60_000, SCOPE),
  );
}

/**
 * One session as the distiller stage sees it: its events kept, then every episode close
 * distilled (window, extractive distillation, memories). Returns [episodes, memories].
 */
function distilSession(session: RecordedSession): [number, number] {
  const state = newDistillerSession({ sessionId: session.sessionId, ...SCOPE });
  for (const prompt of session.prompts) addPrompt(state, prompt);
  for (const call of session.toolCalls) addToolCall(state, call);
  let episodes = 0;
  let memories = 0;
  for (const boundary of session.boundaries) {
    if (boundary.type === 'EpisodeOpened') {
      noteEpisodeOpened(state, boundary);
      continue;
    }
    noteEpisodeClosed(state, boundary);
    const decision = distillationWindow(
      { kind: 'EpisodeClosed', event: boundary },
      sessionEventsOf(state),
    );
    if (decision.kind === 'skip') continue;
    episodes += 1;
    memories += distillationToMemories(distillExtractively(decision.window)).length;
  }
  return [episodes, memories];
}

/** `engram bench distill`: episodes/s of the extractive distiller (SPEC §12, issue #6). */
export function benchDistill(sessionCount = 2_000): DistillBench {
  const sessions = recordedSessions(sessionCount);
  const run = () => {
    const started = process.hrtime.bigint();
    let episodes = 0;
    let memories = 0;
    for (const session of sessions) {
      const [e, m] = distilSession(session);
      episodes += e;
      memories += m;
    }
    return { seconds: Number(process.hrtime.bigint() - started) / 1e9, episodes, memories };
  };
  run(); // warm-up
  const passes = [run(), run(), run()].sort((a, b) => a.seconds - b.seconds);
  const { seconds, episodes, memories } = passes[1];
  return {
    benchmark: 'distill',
    method: 'extractive',
    sessions: sessionCount,
    episodes,
    memories,
    seconds: Number(seconds.toFixed(3)),
    episodesPerSecond: Math.round(episodes / seconds),
    memoriesPerSecond: Math.round(memories / seconds),
    cores: cpus().length,
  };
}

export function formatDistillBench(result: DistillBench): string {
  return (
    `distill (extractive): ${result.episodesPerSecond.toLocaleString('en')} episodes/s, ` +
    `${result.memoriesPerSecond.toLocaleString('en')} memories/s (${result.episodes} episodes of ` +
    `${result.sessions} recorded sessions in ${result.seconds} s, median of 3, ${result.cores} cores)`
  );
}
