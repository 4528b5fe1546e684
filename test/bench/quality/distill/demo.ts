import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DistillPrompt, DistillToolCall } from '../../../../libs/core/src/distillation/types';
import type { LabelledEpisode } from './types';
import { episodeWindow } from './windows';

/** The session `engram demo` replays (read at run time, from the repository root). */
export const DEMO_SESSION_PATH = join('apps', 'engram', 'demo', 'demo-session.jsonl');

/**
 * The demo's three episodes (the prompt ranges its segmenter closes: the refresh fix and its
 * correction, the search rate limit and the push, the release notes), labelled by hand.
 */
const EPISODES: readonly { first: number; last: number; facts: LabelledEpisode['facts'] }[] = [
  {
    first: 1,
    last: 3,
    facts: [
      {
        text: 'In the refresh tests, do not mock Date.now: use vitest fake timers instead of the manual clock stub',
        keys: ['fake timers', 'clock stub|Date.now'],
      },
      {
        text: 'The checkout test failed with a TypeError reading expiresAt in src/auth/refresh.ts; fixed in the refresh logic (src/auth/refresh.ts), then it passed',
        keys: ['expiresAt|TypeError', 'refresh.ts|refresh logic'],
      },
    ],
  },
  {
    first: 4,
    last: 5,
    facts: [
      {
        text: 'The public product search endpoint is rate limited to 20 requests per minute per IP (src/api/search.ts, src/api/middleware.ts)',
        keys: ['20 requests', 'per ip', 'search'],
      },
      {
        text: 'The rate-limit test expected 429 but got 200; fixed in src/api/middleware.ts',
        keys: ['429', 'middleware.ts'],
      },
    ],
  },
  {
    first: 6,
    last: 6,
    facts: [
      {
        text: 'Release notes for version 2.3 (CHANGELOG.md) cover the refresh token fix and the search rate limit',
        keys: ['release notes', '2.3'],
      },
    ],
  },
];

interface DemoLine {
  type: string;
  timestamp: string;
  [field: string]: unknown;
}

export function demoEpisodes(repoRoot: string): LabelledEpisode[] {
  const lines = readFileSync(join(repoRoot, DEMO_SESSION_PATH), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as DemoLine);
  const at = (line: DemoLine) => Date.parse(line.timestamp);
  const prompts = lines
    .filter((line) => line.type === 'PromptSubmitted')
    .map((line) => ({ ...line, timestamp: at(line) }) as unknown as DistillPrompt);
  const toolCalls = lines
    .filter((line) => line.type === 'ToolCallObserved')
    .map((line) => ({ ...line, timestamp: at(line) }) as unknown as DistillToolCall);
  const first = lines[0] as unknown as { tenantId: string; projectId: string; sessionId: string };
  const scope = {
    tenantId: first.tenantId,
    projectId: first.projectId,
    sessionId: first.sessionId,
  };
  return EPISODES.map((episode) => ({
    dataset: 'demo',
    name: `demo ${episode.first}..${episode.last}`,
    window: episodeWindow(scope, prompts, toolCalls, episode.first, episode.last),
    facts: episode.facts,
  }));
}
