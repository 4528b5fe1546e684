import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Typed } from '@engram/contracts';
import {
  ClaudeTranscriptReader,
  mapTranscriptSession,
} from '../../../../libs/core/src/hooks/claude-transcript';
import type { DistillPrompt, DistillToolCall } from '../../../../libs/core/src/distillation/types';
import type { LabelledEpisode } from './types';
import { episodeWindow } from './windows';

/** The real Claude Code transcript of ../shared/datasets (read at run time, never copied). */
export const GRAPH_MONITOR_PATH = join('claude-code-session', 'graph-monitor_session.jsonl');
const PROJECT_ROOT = '/Users/michael/Projects/oss/graph-monitor';

/**
 * The developer's requests, each an episode: its first and last transcript line (1-based), and
 * the facts a reader should retain, labelled by hand from the whole transcript (the user's words,
 * the tool calls and results, and the assistant's text, which the distiller never sees). The
 * `/init` at lines 4–50 is left out: its prompt is injected (isMeta), so no episode holds it.
 */
const EPISODES: readonly {
  lines: [number, number];
  name: string;
  facts: LabelledEpisode['facts'];
}[] = [
  {
    name: 'README to the static PNG app',
    lines: [51, 65],
    facts: [
      {
        text: 'The React web app was removed in favour of generating static PNG files',
        keys: ['react', 'png'],
      },
      {
        text: 'README.md was updated to describe the current app (static PNG charts)',
        keys: ['readme', 'updat'],
      },
    ],
  },
  {
    name: 'commit the README',
    lines: [66, 83],
    facts: [
      {
        text: 'The project already has a git repository: do not run git init',
        keys: ['git init', 'repo'],
      },
      {
        text: 'Commit messages follow the conventional commit convention (see git log for examples)',
        keys: ['conventional commit'],
      },
    ],
  },
  {
    name: 'CommonJS to TypeScript and ESM',
    lines: [84, 359],
    facts: [
      {
        text: 'The project was migrated from CommonJS to TypeScript with ESM',
        keys: ['typescript', 'esm', 'cjs|commonjs'],
      },
      {
        text: 'Node v24 runs TypeScript directly, so nothing is transpiled',
        keys: ['node v24|v24', 'transpile'],
      },
      {
        text: 'After the move, npm start failed (ERR_MODULE_NOT_FOUND: imports need .ts extensions; then the logger and sqlite3 setup); fixed in the imports, logger.ts and database.ts',
        keys: ['npm start', 'ERR_MODULE_NOT_FOUND|logger.ts|database.ts'],
      },
    ],
  },
  {
    name: 'folders: data-capture to src',
    lines: [360, 481],
    facts: [
      {
        text: 'Folders restructured: /data-capture became /src, metrics.db moved to /data, serve-charts to /web and charts to /web/charts',
        keys: ['data-capture', 'src', 'web'],
      },
      {
        text: 'There is no separate data-capture app any more: the vite+react web app is gone, so one folder',
        keys: ['separate', 'data-capture'],
      },
    ],
  },
  {
    name: 'drop --experimental-strip-types',
    lines: [482, 501],
    facts: [
      {
        text: 'Node v24 no longer needs --experimental-strip-types (on by default): removed from the package.json scripts',
        keys: ['experimental-strip-types', 'v24|no longer|default'],
      },
      {
        text: 'package.json states the minimum Node version',
        keys: ['minimum node version|engines'],
      },
    ],
  },
  {
    name: 'memory: conventional commits',
    lines: [502, 503],
    facts: [
      {
        text: 'When committing, always use the conventional-commits convention for the log message',
        keys: ['conventional', 'commit'],
      },
    ],
  },
];

interface LineTime {
  timestamp?: unknown;
}

/** The transcript's episodes with their labels, or null when the dataset is not there. */
export function graphMonitorEpisodes(datasetsDir: string): LabelledEpisode[] | null {
  let content: string;
  try {
    content = readFileSync(join(datasetsDir, GRAPH_MONITOR_PATH), 'utf8');
  } catch {
    return null;
  }
  const lineTimes = content
    .split(/\r?\n/)
    .map((line) =>
      line.trim() === '' ? NaN : Date.parse(String((JSON.parse(line) as LineTime).timestamp)),
    );
  const reader = new ClaudeTranscriptReader();
  reader.read(content, GRAPH_MONITOR_PATH);
  const [session] = reader.sessions();
  const events = mapTranscriptSession(session, {
    tenantId: 'bench',
    projectId: 'graph-monitor',
    projectRoot: PROJECT_ROOT,
    agentId: 'claude-code',
    userId: 'michael',
    gitBranch: session.gitBranch,
    gitHeadSha: null,
  });
  const prompts = events.filter(
    (e): e is Typed<'PromptSubmitted'> => e.type === 'PromptSubmitted',
  ) as DistillPrompt[];
  const toolCalls = events.filter(
    (e): e is Typed<'ToolCallObserved'> => e.type === 'ToolCallObserved',
  ) as DistillToolCall[];
  const scope = { tenantId: 'bench', projectId: 'graph-monitor', sessionId: session.sessionId };
  return EPISODES.map((episode) => {
    const from = lineTimes[episode.lines[0] - 1];
    const to = lineTimes[episode.lines[1] - 1];
    const ids = prompts
      .filter((p) => p.source === 'user' && p.timestamp >= from && p.timestamp <= to)
      .map((p) => p.promptId);
    if (ids.length === 0) throw new Error(`graph-monitor ${episode.name}: no prompt in its lines`);
    return {
      dataset: 'graph-monitor',
      name: episode.name,
      window: episodeWindow(scope, prompts, toolCalls, Math.min(...ids), Math.max(...ids)),
      facts: episode.facts,
    };
  });
}
