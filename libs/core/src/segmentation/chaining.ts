import { topicSimilarity, type TopicMeasure } from './topic-similarity';

/**
 * Episode chaining (seed 003 §1, SPEC §4.3): when an episode opens, the best recently closed
 * episode of the same project on the same topic becomes its parent, so a debugging arc over three
 * days reads as one chain. A parent the client names explicitly always wins.
 */

const HOUR_MS = 60 * 60 * 1000;

/** A recently closed episode that may become a parent. Plain JSON. */
export interface ChainCandidate {
  episodeId: string;
  projectId: string;
  /** Epoch millis of the EpisodeClosed. */
  closedAt: number;
  /** The closed episode's accumulated intent keywords. */
  keywords: readonly string[];
  embedding?: readonly number[] | null;
  /** The closed episode's own parent, when it had one: what makes the candidates a chain. */
  parentEpisodeId?: string | null;
}

export interface ChooseParentInput {
  /** The opening episode's intent keywords. */
  keywords: readonly string[];
  /** The opening episode's embedding (hybrid mode), when there is one. */
  embedding?: readonly number[] | null;
  projectId: string;
  /** Event time at which the episode opens (epoch millis). */
  now: number;
  /** A parent named by the client (PromptSubmitted.parentEpisodeId); wins when non-empty. */
  explicitParentId?: string | null;
  /** The opening episode's own id: never its own parent. */
  episodeId?: string;
  candidates: readonly ChainCandidate[];
}

export interface ChainingOptions {
  /** Only episodes closed at most this long before `now` (seed 003: 48 h). */
  maxAgeMs: number;
  /** Topic similarity must be strictly greater (seed 003: 0.85). */
  minSimilarity: number;
}

export const DEFAULT_CHAINING_OPTIONS: Readonly<ChainingOptions> = Object.freeze({
  maxAgeMs: 48 * HOUR_MS,
  minSimilarity: 0.85,
});

export interface ParentChoice {
  parentEpisodeId: string | null;
  /** explicit: named by the client; auto: detected; none: no parent. */
  source: 'explicit' | 'auto' | 'none';
  /**
   * Topic similarity of the best match (the parent is that match or its latest descendant among
   * the candidates), or of the best rejected candidate; null if none.
   */
  similarity: number | null;
  measure: TopicMeasure | null;
  /** Candidates inside the project and time window that were compared. */
  considered: number;
}

/**
 * Chooses the parent of an opening episode. An explicit parent id wins. Otherwise candidates are
 * the episodes of the same project closed within `maxAgeMs` before `now` (closedAt ≤ now; an
 * episode "closed" after the new one opened cannot precede it), excluding the episode itself.
 * Topic similarity is `topicSimilarity`: the cosine of the embeddings when both the new episode
 * and the candidate have one, else the Jaccard similarity of the keyword bags. A candidate needs
 * similarity > `minSimilarity`; the most similar wins; ties go to the more recently closed, then
 * to the smaller episode id (code-unit order). The parent is then the *latest* episode of the
 * winner's chain among the candidates: while a candidate names the current one as its parent,
 * the walk moves to the most recently closed such child (ties: the smaller id). Three episodes of
 * one topic so form a chain (2 → 1, 3 → 2), not a star around the first, even when the second
 * episode's accumulated keywords drifted from the topic's opening words.
 */
export function chooseParentEpisode(
  input: ChooseParentInput,
  options: Partial<ChainingOptions> = {},
): ParentChoice {
  const { maxAgeMs, minSimilarity } = { ...DEFAULT_CHAINING_OPTIONS, ...options };
  const explicit = input.explicitParentId?.trim();
  if (explicit) {
    return {
      parentEpisodeId: explicit,
      source: 'explicit',
      similarity: null,
      measure: null,
      considered: 0,
    };
  }
  const scored = input.candidates
    .filter(
      (candidate) =>
        candidate.projectId === input.projectId &&
        candidate.episodeId !== input.episodeId &&
        candidate.closedAt <= input.now &&
        input.now - candidate.closedAt <= maxAgeMs,
    )
    .map((candidate) => ({ candidate, topic: topicSimilarity(input, candidate) }))
    .sort(
      (a, b) =>
        b.topic.similarity - a.topic.similarity ||
        b.candidate.closedAt - a.candidate.closedAt ||
        compareText(a.candidate.episodeId, b.candidate.episodeId),
    );
  const best = scored[0];
  if (best === undefined) {
    return {
      parentEpisodeId: null,
      source: 'none',
      similarity: null,
      measure: null,
      considered: 0,
    };
  }
  const accepted = best.topic.similarity > minSimilarity;
  return {
    parentEpisodeId: accepted
      ? latestOfChain(
          best.candidate,
          scored.map((s) => s.candidate),
        )
      : null,
    source: accepted ? 'auto' : 'none',
    similarity: best.topic.similarity,
    measure: best.topic.measure,
    considered: scored.length,
  };
}

/** The most recent descendant of `start` among `candidates` (start itself when it has none). */
function latestOfChain(start: ChainCandidate, candidates: readonly ChainCandidate[]): string {
  const children = new Map<string, ChainCandidate[]>();
  for (const candidate of candidates) {
    const parent = candidate.parentEpisodeId;
    if (!parent) continue;
    const siblings = children.get(parent);
    if (siblings) siblings.push(candidate);
    else children.set(parent, [candidate]);
  }
  const seen = new Set<string>([start.episodeId]);
  let current = start;
  for (;;) {
    const next = (children.get(current.episodeId) ?? [])
      .filter((child) => !seen.has(child.episodeId) && child.closedAt >= current.closedAt)
      .sort(newestFirst)[0];
    if (next === undefined) return current.episodeId;
    seen.add(next.episodeId);
    current = next;
  }
}

export interface RecentEpisodeIndexOptions {
  /** Episodes closed longer ago than this are evicted (default: the chaining window, 48 h). */
  maxAgeMs: number;
  /** At most this many episodes per project; the oldest go first. */
  maxPerProject: number;
}

export const DEFAULT_RECENT_EPISODE_INDEX_OPTIONS: Readonly<RecentEpisodeIndexOptions> =
  Object.freeze({ maxAgeMs: DEFAULT_CHAINING_OPTIONS.maxAgeMs, maxPerProject: 100 });

/**
 * The serialised index: plain JSON (it lives in the segmenter's compacted changelog). Projects
 * sorted by id, each project's episodes newest first (then by id).
 */
export interface RecentEpisodeIndexState {
  projects: { projectId: string; episodes: ChainCandidate[] }[];
}

/**
 * The recently closed episodes per project that `chooseParentEpisode` compares against. Bounded:
 * episodes older than `maxAgeMs` are evicted and each project keeps at most `maxPerProject`
 * (newest kept). Deterministic; time only comes in as arguments.
 */
export class RecentEpisodeIndex {
  private readonly options: RecentEpisodeIndexOptions;
  private readonly projects = new Map<string, ChainCandidate[]>();
  /** episodeId → projectId, so a removal looks in one project only. */
  private readonly projectOf = new Map<string, string>();

  constructor(options: Partial<RecentEpisodeIndexOptions> = {}, state?: RecentEpisodeIndexState) {
    this.options = { ...DEFAULT_RECENT_EPISODE_INDEX_OPTIONS, ...options };
    for (const project of state?.projects ?? []) {
      for (const episode of project.episodes) this.insert(copyCandidate(episode));
    }
    for (const projectId of [...this.projects.keys()]) this.capProject(projectId);
  }

  /** Restores an index from its changelog state (re-applying the caps of `options`). */
  static fromJSON(
    state: RecentEpisodeIndexState,
    options: Partial<RecentEpisodeIndexOptions> = {},
  ): RecentEpisodeIndex {
    return new RecentEpisodeIndex(options, state);
  }

  /** Adds (or replaces, by episodeId) a closed episode, then evicts stale and surplus ones. */
  add(episode: ChainCandidate, now: number): void {
    this.remove(episode.episodeId);
    this.insert(copyCandidate(episode));
    this.pruneProject(episode.projectId, now);
    this.capProject(episode.projectId);
  }

  /** Removes an episode; true when it was there. */
  remove(episodeId: string): boolean {
    const projectId = this.projectOf.get(episodeId);
    if (projectId === undefined) return false;
    this.projectOf.delete(episodeId);
    const episodes = this.projects.get(projectId) ?? [];
    const index = episodes.findIndex((episode) => episode.episodeId === episodeId);
    if (index >= 0) episodes.splice(index, 1);
    if (episodes.length === 0) this.projects.delete(projectId);
    return index >= 0;
  }

  /** Evicts every episode closed more than `maxAgeMs` before `now`; returns how many. */
  prune(now: number): number {
    let evicted = 0;
    for (const projectId of [...this.projects.keys()]) evicted += this.pruneProject(projectId, now);
    return evicted;
  }

  /** Like `prune`, returning the projects that lost episodes (sorted): their records changed. */
  pruneProjects(now: number): string[] {
    const changed: string[] = [];
    for (const projectId of [...this.projects.keys()].sort(compareText)) {
      if (this.pruneProject(projectId, now) > 0) changed.push(projectId);
    }
    return changed;
  }

  /**
   * The project's episodes inside the window at `now`, newest first (no eviction). The entries
   * are the index's own, read-only: copying them on every episode opening cost the segmenter
   * more than choosing the parent.
   */
  candidates(projectId: string, now: number): readonly Readonly<ChainCandidate>[] {
    return (this.projects.get(projectId) ?? []).filter((episode) => !this.isStale(episode, now));
  }

  /** Episodes held, all projects. */
  get size(): number {
    let size = 0;
    for (const episodes of this.projects.values()) size += episodes.length;
    return size;
  }

  /** The project's episodes (copies), newest first, stale ones included: its changelog record. */
  episodesOf(projectId: string): ChainCandidate[] {
    return (this.projects.get(projectId) ?? []).map(copyCandidate);
  }

  toJSON(): RecentEpisodeIndexState {
    return {
      projects: [...this.projects.keys()].sort(compareText).map((projectId) => ({
        projectId,
        episodes: (this.projects.get(projectId) ?? []).map(copyCandidate),
      })),
    };
  }

  private insert(episode: ChainCandidate): void {
    const episodes = this.projects.get(episode.projectId) ?? [];
    const existing = episodes.findIndex((other) => other.episodeId === episode.episodeId);
    if (existing >= 0) episodes.splice(existing, 1);
    episodes.push(episode);
    episodes.sort(newestFirst);
    this.projects.set(episode.projectId, episodes);
    this.projectOf.set(episode.episodeId, episode.projectId);
  }

  private isStale(episode: ChainCandidate, now: number): boolean {
    return now - episode.closedAt > this.options.maxAgeMs;
  }

  private pruneProject(projectId: string, now: number): number {
    const episodes = this.projects.get(projectId);
    if (episodes === undefined) return 0;
    const kept = episodes.filter((episode) => !this.isStale(episode, now));
    for (const episode of episodes) {
      if (this.isStale(episode, now)) this.projectOf.delete(episode.episodeId);
    }
    if (kept.length === 0) this.projects.delete(projectId);
    else this.projects.set(projectId, kept);
    return episodes.length - kept.length;
  }

  private capProject(projectId: string): void {
    const episodes = this.projects.get(projectId);
    if (episodes === undefined) return;
    const limit = Math.max(0, Math.floor(this.options.maxPerProject));
    for (const evicted of episodes.length > limit ? episodes.splice(limit) : []) {
      this.projectOf.delete(evicted.episodeId);
    }
    if (episodes.length === 0) this.projects.delete(projectId);
  }
}

export interface ChainWalk {
  /** Root first, ending with the episode the walk started from. */
  episodeIds: string[];
  /** The id met a second time when the parent links form a cycle; the walk stopped there. */
  cycleAt: string | null;
  /** An id that `getParent` did not know (returned undefined); the walk stopped there. */
  missing: string | null;
  /** The walk stopped at `maxDepth` episodes while a parent was still named. */
  truncated: boolean;
}

/**
 * Walks the parent links up from `episodeId` (seed 003 `get_episode_chain`) and returns the ids
 * root first. `getParent(id)` returns the parent id, null (or '') for a root, or undefined for an
 * unknown episode — an unknown episode is not part of the chain (so an unknown start gives an
 * empty chain). At most `maxDepth` episodes (a positive integer) are returned. A cycle stops the
 * walk and is reported in `cycleAt`, never thrown.
 */
export function walkChain(
  episodeId: string,
  getParent: (id: string) => string | null | undefined,
  maxDepth = 100,
): ChainWalk {
  if (!Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new RangeError(`maxDepth must be a positive integer, got ${maxDepth}`);
  }
  const visited: string[] = [];
  const seen = new Set<string>();
  let current: string | null = episodeId;
  let cycleAt: string | null = null;
  let missing: string | null = null;
  let truncated = false;
  while (current !== null) {
    if (seen.has(current)) {
      cycleAt = current;
      break;
    }
    if (visited.length >= maxDepth) {
      truncated = true;
      break;
    }
    const parent = getParent(current);
    if (parent === undefined) {
      missing = current;
      break;
    }
    seen.add(current);
    visited.push(current);
    current = parent === null || parent === '' ? null : parent;
  }
  return { episodeIds: visited.reverse(), cycleAt, missing, truncated };
}

function newestFirst(a: ChainCandidate, b: ChainCandidate): number {
  return b.closedAt - a.closedAt || compareText(a.episodeId, b.episodeId);
}

function copyCandidate(episode: ChainCandidate): ChainCandidate {
  const copy: ChainCandidate = {
    episodeId: episode.episodeId,
    projectId: episode.projectId,
    closedAt: episode.closedAt,
    keywords: [...episode.keywords],
  };
  if (episode.parentEpisodeId !== undefined) copy.parentEpisodeId = episode.parentEpisodeId;
  if (episode.embedding !== undefined) {
    copy.embedding = episode.embedding === null ? null : [...episode.embedding];
  }
  return copy;
}

/** Locale-independent string order (UTF-16 code units). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
