/**
 * Distillation quality (issue #23 item 6): does the extractive distiller keep what a reader should
 * retain from an episode, and how much of what it stores is noise? A hand-labelled set: the
 * episodes of the shipped demo session, the requests of a real Claude Code transcript
 * (../shared/datasets/claude-code-session, read at run time) and hand-written episodes. Each
 * episode is distilled as the distiller service does on EpisodeClosed, its facts become memories
 * (the stored ones: 🟡 and above, the work state left out), and the memories are matched against
 * the labelled facts by key terms (distill/score.ts). Beside it, two baselines that need no
 * distiller: every user prompt stored as a memory, and the first sentence of each.
 */
import { distillationToMemories } from '../../../libs/core/src/distillation/memories';
import { distillExtractively } from '../../../libs/core/src/distillation/extractive/extractive-distiller';
import { demoEpisodes } from './distill/demo';
import { graphMonitorEpisodes } from './distill/graph-monitor';
import { KEY_SHARE, scoreEpisodes, scoreMetrics } from './distill/score';
import { syntheticEpisodes } from './distill/synthetic';
import type { LabelledEpisode } from './distill/types';
import type { QualityRow, QualityRunner, QualitySection } from './types';

export interface DistillMethod {
  name: string;
  baseline: boolean;
  memories: (episode: LabelledEpisode) => string[];
}

/** The memories the distiller stores for an episode (what recall can return), work state aside. */
export function engramMemories(episode: LabelledEpisode): string[] {
  const distillation = distillExtractively(episode.window);
  return distillationToMemories(distillation)
    .filter((memory) => memory.memoryType !== 'work_state')
    .map((memory) => memory.content);
}

function userPrompts(episode: LabelledEpisode): string[] {
  return episode.window.prompts
    .filter((p) => p.source === 'user' && p.text.trim() !== '')
    .map((p) => p.text.trim());
}

export const DISTILL_METHODS: readonly DistillMethod[] = [
  { name: 'engram extractive', baseline: false, memories: engramMemories },
  { name: 'every user prompt', baseline: true, memories: userPrompts },
  {
    name: 'first sentence of each prompt',
    baseline: true,
    memories: (episode) =>
      userPrompts(episode).map((text) => text.split(/(?<=[.!?])\s+|\n+/)[0].trim()),
  },
];

export function labelledEpisodes(
  repoRoot: string,
  datasetsDir: string,
): {
  episodes: LabelledEpisode[];
  notes: string[];
} {
  const notes: string[] = [];
  const graph = graphMonitorEpisodes(datasetsDir);
  if (graph === null) notes.push(`graph-monitor skipped: no transcript under ${datasetsDir}`);
  return { episodes: [...demoEpisodes(repoRoot), ...(graph ?? []), ...syntheticEpisodes()], notes };
}

export function distillRows(episodes: readonly LabelledEpisode[]): QualityRow[] {
  const datasets = [...new Set(episodes.map((e) => e.dataset))];
  const groups = [
    ...datasets.map((name) => ({ name, episodes: episodes.filter((e) => e.dataset === name) })),
    { name: 'all', episodes },
  ];
  return groups.flatMap((group) =>
    DISTILL_METHODS.map((method) => ({
      area: 'distill',
      dataset: group.name,
      method: method.name,
      baseline: method.baseline,
      metrics: scoreMetrics(scoreEpisodes(group.episodes, method.memories)),
    })),
  );
}

export const runDistillQuality: QualityRunner = async (options) => {
  const { episodes, notes } = labelledEpisodes(process.cwd(), options.datasetsDir);
  const facts = episodes.reduce((sum, e) => sum + e.facts.length, 0);
  const section: QualitySection = {
    area: 'distill',
    rows: distillRows(episodes),
    notes: [
      ...notes,
      `${episodes.length} hand-labelled episodes, ${facts} facts (demo, graph-monitor transcript, synthetic); ` +
        `a memory states a fact when it holds ⌈${KEY_SHARE}·k⌉ of the fact's k key terms; ` +
        'precision = stored memories (🟡 and above, work state aside) that state a labelled fact',
    ],
  };
  return Promise.resolve(section);
};
