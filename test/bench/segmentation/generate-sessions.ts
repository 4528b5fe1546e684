/**
 * Deterministic generator of synthetic coding-agent sessions for the segmentation benchmark.
 *
 * A session is a sequence of tasks in one fictional repository; a task is a sequence of user
 * prompts (an opening prompt, then follow-ups, terse continuations, corrections, paraphrases,
 * a closing). The gold label of a prompt is whether it opens a task. Everything is drawn from a
 * seeded PRNG, so the same seed and version produce byte-identical files.
 *
 * Output: PromptSubmitted objects (exactly the contract fields) as JSON lines, and the gold
 * labels as separate JSON lines. See README.md beside this file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { v5 as uuidv5 } from 'uuid';
import type { PromptSubmitted } from '../../../libs/contracts/src/agent-events';
import {
  CLOSINGS,
  FAMILIES,
  GENERIC_CORRECTIONS,
  GENERIC_DISCUSSION_FOLLOWUPS,
  GENERIC_FOLLOWUPS,
  RESUMES,
  TERSE_CONTINUATIONS,
  type FamilyName,
  type FamilyTemplates,
} from './families';
import { Rng } from './rng';
import type { GoldLabel, PromptCategory } from './types';
import { AGENTS, REPOS, type ModuleVocab, type RepoVocab } from './vocabulary';

/** Bump when the generator's output changes, so cached datasets are regenerated. */
export const GENERATOR_VERSION = 1;
/** The documented default seed (the date of seed 000's ADR). */
export const DEFAULT_SEED = 20260218;
export const DEFAULT_SESSIONS = 360;
/** Namespace of the benchmark's uuid v5 ids (itself a uuid v5 of a URL-ish name). */
export const BENCH_NAMESPACE = uuidv5('engram.bench.segmentation', uuidv5.URL);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** A gap longer than this is a "long gap" (the default thread inactivity timeout, SPEC §4.1). */
export const LONG_GAP_MS = 30 * MINUTE;
/** Sessions stay under 24 h (an episode's time limit) by construction. */
const MAX_SESSION_SPAN_MS = 22 * HOUR;
/** 2026-01-05T00:00:00Z, a Monday. */
const FIRST_DAY_MS = Date.UTC(2026, 0, 5);

export type PromptKind =
  'opening' | 'followup' | 'generic' | 'terse' | 'correction' | 'paraphrase' | 'closing' | 'resume';

interface DraftPrompt {
  text: string;
  kind: PromptKind;
}

interface DraftTask {
  family: FamilyName;
  module: string;
  openerIndex: number;
  sibling: boolean;
  shortOpener: boolean;
  slots: Slots;
  prompts: DraftPrompt[];
}

export type Slots = Record<string, string>;

export interface GenerateOptions {
  seed?: number | string;
  sessions?: number;
}

export interface DatasetStats {
  generatorVersion: number;
  seed: string;
  sessions: number;
  prompts: number;
  tasks: number;
  /** Gold boundaries, not counting each session's first prompt. */
  boundaries: number;
  singlePromptSessions: number;
  singleTaskSessions: number;
  promptsPerSession: { min: number; mean: number; max: number };
  promptsPerTask: { mean: number; max: number };
  /** Prompts of fewer than five words. */
  tersePrompts: number;
  terseShare: number;
  longGaps: { withinTask: number; betweenTasks: number };
  categories: Record<PromptCategory, number>;
  families: Record<string, number>;
  repositories: Record<string, number>;
}

export interface Dataset {
  events: PromptSubmitted[];
  labels: GoldLabel[];
  stats: DatasetStats;
}

// ---------------------------------------------------------------------------------------------
// Keywords (the generator's own, only to tag hard cases; deliberately not Engram's)

const STOP_WORDS = new Set(
  (
    'the a an and or but if then else of to in on at by for with from into onto over under ' +
    'is are was were be been being am do does did done doing have has had having it its this ' +
    'that these those there here what which who whom whose why how when where can could would ' +
    'should will shall may might must not no yes ok okay please pls just also now again still ' +
    'too very really actually maybe perhaps some any all each every both more most less least ' +
    'you your yours we our ours me my mine i he she they them their us let lets get got make ' +
    'made want need think like sure thanks thank one two three first second other others same ' +
    'about before after than so as up out off down only own such way thing things something ' +
    'anything everything use used using go going went see look looks show tell give take try ' +
    "don't doesn't didn't isn't can't won't i'm it's that's let's we're"
  ).split(/\s+/),
);

function stem(token: string): string {
  if (token.length > 5 && token.endsWith('ing')) return token.slice(0, -3);
  if (token.length > 4 && token.endsWith('ed')) return token.slice(0, -2);
  if (token.length > 4 && token.endsWith('es')) return token.slice(0, -2);
  if (token.length > 3 && token.endsWith('s') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

/** Lower-cased, identifier-split, stop-word-free, crudely stemmed content words. */
export function benchKeywords(text: string): Set<string> {
  const split = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  const words = new Set<string>();
  for (const raw of split.split(/[^a-z0-9']+/)) {
    const token = raw.replace(/^'+|'+$/g, '');
    if (token.length < 3 || STOP_WORDS.has(token) || /^\d+$/.test(token)) continue;
    words.add(stem(token.replace(/'/g, '')));
  }
  return words;
}

export function wordCount(text: string): number {
  return text.trim().split(/\s+/).filter(Boolean).length;
}

// ---------------------------------------------------------------------------------------------
// Tasks

/** Fills `{slot}` placeholders; throws on a slot the task has no value for. */
export function fillTemplate(template: string, slots: Slots): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = slots[key];
    if (value === undefined) throw new Error(`template slot {${key}} has no value: ${template}`);
    return value;
  });
}

/** Picks from `items`, avoiding `avoid` when there is another choice. */
function pickOther<T>(rng: Rng, items: readonly T[], avoid: T | undefined): T {
  const others = items.filter((item) => item !== avoid);
  return rng.pick(others.length > 0 ? others : items);
}

/** The slot values of one task, avoiding the values of `avoid` where there is a choice. */
export function drawSlots(
  rng: Rng,
  repo: RepoVocab,
  module: ModuleVocab,
  avoid: Slots = {},
): Slots {
  const dep = pickOther(
    rng,
    repo.deps,
    repo.deps.find((d) => d.name === avoid.dep),
  );
  const [file, file2] = twoOf(rng, module.files, avoid.file);
  const [sym, sym2] = twoOf(rng, module.symbols, avoid.sym);
  return {
    repo: repo.name,
    module: module.name,
    area: rng.pick(module.area),
    alt: rng.pick(module.alt),
    file,
    file2,
    sym,
    sym2,
    test: pickOther(rng, module.tests, avoid.test),
    err: pickOther(rng, module.errors, avoid.err),
    symptom: pickOther(rng, module.symptoms, avoid.symptom),
    feature: pickOther(rng, module.features, avoid.feature),
    data: pickOther(rng, module.data, avoid.data),
    surface: pickOther(rng, module.surface, avoid.surface),
    perf: pickOther(rng, module.perf, avoid.perf),
    dep: dep.name,
    from: dep.from,
    to: dep.to,
    job: pickOther(rng, repo.ciJobs, avoid.job),
    buildErr: pickOther(rng, repo.buildErrors, avoid.buildErr),
    env: pickOther(rng, repo.envs, avoid.env),
    envErr: pickOther(rng, repo.envErrors, avoid.envErr),
    service: rng.pick(repo.services),
    secret: pickOther(rng, repo.secrets, avoid.secret),
    designTopic: pickOther(rng, repo.designTopics, avoid.designTopic),
    doc: pickOther(rng, repo.docs, avoid.doc),
    testCmd: repo.testCmd,
    buildCmd: repo.buildCmd,
    lintCmd: repo.lintCmd,
    lockfile: repo.lockfile,
    pr: String(rng.int(120, 2400)),
    n: String(rng.int(3, 9)),
    ms: String(rng.int(8, 60) * 100),
    version: `v${rng.int(1, 4)}.${rng.int(0, 19)}.${rng.int(0, 9)}`,
  };
}

/** Two distinct items (the second equals the first only for a one-item list). */
function twoOf(
  rng: Rng,
  items: readonly string[],
  avoidFirst: string | undefined,
): [string, string] {
  const first = pickOther(rng, items, avoidFirst);
  return [first, pickOther(rng, items, first)];
}

/** Draws templates from a pool without repeating one inside a task while others are left. */
class Deck {
  private left: string[] = [];

  constructor(
    private readonly rng: Rng,
    private readonly pool: readonly string[],
  ) {}

  draw(): string {
    if (this.left.length === 0) this.left = [...this.pool];
    const index = this.rng.int(0, this.left.length - 1);
    return this.left.splice(index, 1)[0];
  }
}

const TASK_LENGTHS: readonly (readonly [number, number])[] = [
  [1, 8],
  [2, 12],
  [3, 15],
  [4, 15],
  [5, 13],
  [6, 10],
  [7, 8],
  [8, 6],
  [10, 5],
  [12, 4],
  [15, 3],
  [20, 1],
];

const FOLLOWUP_KINDS: readonly (readonly [PromptKind, number])[] = [
  ['terse', 27],
  ['followup', 34],
  ['generic', 13],
  ['correction', 7],
  ['paraphrase', 10],
];

function buildTask(
  rng: Rng,
  repo: RepoVocab,
  module: ModuleVocab,
  family: FamilyTemplates,
  options: {
    length: number;
    openerIndex?: number;
    sibling?: boolean;
    short?: boolean;
    avoid?: Slots;
  },
): DraftTask {
  const slots = drawSlots(rng, repo, module, options.avoid);
  const openerIndex = options.openerIndex ?? rng.int(0, family.openers.length - 1);
  const short = options.short === true && family.shortOpeners !== undefined;
  const opener = short ? rng.pick(family.shortOpeners!) : family.openers[openerIndex];
  const prompts: DraftPrompt[] = [{ text: fillTemplate(opener, slots), kind: 'opening' }];
  const followups = new Deck(rng, family.followups);
  const generic = new Deck(
    rng,
    family.discussion === true ? GENERIC_DISCUSSION_FOLLOWUPS : GENERIC_FOLLOWUPS,
  );
  const corrections = new Deck(rng, [...family.corrections, ...GENERIC_CORRECTIONS]);
  const paraphrases = new Deck(rng, family.paraphrases);
  for (let j = 1; j < options.length; j++) {
    const last = j === options.length - 1;
    if (last && options.length >= 3 && rng.chance(0.35)) {
      prompts.push({ text: rng.pick(CLOSINGS), kind: 'closing' });
      continue;
    }
    const kind = rng.weighted(FOLLOWUP_KINDS);
    const used = prompts.filter((prompt) => prompt.kind === kind).length;
    // After a short opener the next prompt says what the task is about; at most two corrections
    // and two paraphrases per task.
    const effective: PromptKind =
      (short && j === 1) || ((kind === 'correction' || kind === 'paraphrase') && used >= 2)
        ? 'followup'
        : kind;
    let template: string;
    switch (effective) {
      case 'terse':
        template = rng.weighted(TERSE_CONTINUATIONS);
        break;
      case 'generic':
        template = generic.draw();
        break;
      case 'correction':
        template = corrections.draw();
        break;
      case 'paraphrase':
        template = paraphrases.draw();
        break;
      case 'followup':
      case 'opening':
      case 'closing':
      case 'resume':
        template = followups.draw();
        break;
    }
    prompts.push({ text: fillTemplate(template, slots), kind: effective });
  }
  return {
    family: family.name,
    module: module.name,
    openerIndex,
    sibling: options.sibling === true,
    shortOpener: short,
    slots,
    prompts,
  };
}

// ---------------------------------------------------------------------------------------------
// Surface style: how people actually type

function stylize(rng: Rng, text: string): string {
  let out = text;
  const firstWord = /^([a-z]+)([ ,:])/.exec(out);
  if (firstWord && rng.chance(0.3)) out = out[0].toUpperCase() + out.slice(1);
  if (/[.?]$/.test(out) && !out.includes('\n') && rng.chance(0.4)) out = out.slice(0, -1);
  if (rng.chance(0.03)) {
    const words = out.split(' ');
    const candidates = words
      .map((word, index) => ({ word, index }))
      .filter(({ word }) => /^[a-z]{6,}$/.test(word));
    if (candidates.length > 0) {
      const { word, index } = rng.pick(candidates);
      const at = rng.int(1, word.length - 3);
      words[index] = word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2);
      out = words.join(' ');
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sessions

interface TimedPrompt {
  text: string;
  kind: PromptKind;
  taskIndex: number;
  timestamp: number;
  gapBefore: number;
}

function familyByName(name: FamilyName): FamilyTemplates {
  return FAMILIES.find((family) => family.name === name)!;
}

function draftSession(rng: Rng, repo: RepoVocab): DraftTask[] {
  const shape = rng.weighted<'single-prompt' | 'single-task' | 'multi'>([
    ['single-prompt', 3],
    ['single-task', 9],
    ['multi', 88],
  ]);
  const taskCount =
    shape === 'multi'
      ? rng.weighted([
          [2, 25],
          [3, 25],
          [4, 20],
          [5, 14],
          [6, 9],
          [7, 7],
        ])
      : 1;
  const familyWeights = FAMILIES.filter(
    (family) => !(repo.excludeFamilies ?? []).includes(family.name),
  ).map((family) => [family, family.weight] as const);
  const tasks: DraftTask[] = [];
  for (let t = 0; t < taskCount; t++) {
    const length = shape === 'single-prompt' ? 1 : rng.weighted(TASK_LENGTHS);
    const previous = tasks[t - 1];
    if (previous && rng.chance(0.2)) {
      // A sibling: same family and opening template, another instance ("fix the X bug" again).
      const sameModule = rng.chance(0.55);
      const module = sameModule
        ? repo.modules.find((m) => m.name === previous.module)!
        : pickOther(
            rng,
            repo.modules,
            repo.modules.find((m) => m.name === previous.module),
          );
      tasks.push(
        buildTask(rng, repo, module, familyByName(previous.family), {
          length,
          openerIndex: previous.openerIndex,
          sibling: true,
          avoid: previous.slots,
        }),
      );
      continue;
    }
    const previousModule = repo.modules.find((m) => m.name === previous?.module);
    const module =
      previousModule && rng.chance(0.3)
        ? previousModule
        : pickOther(rng, repo.modules, previousModule);
    const family = rng.weighted(familyWeights);
    tasks.push(
      buildTask(rng, repo, module, family, {
        length,
        short: t > 0 && rng.chance(0.07),
        avoid: previous?.slots,
      }),
    );
  }
  return tasks;
}

function timeSession(rng: Rng, tasks: DraftTask[]): TimedPrompt[] {
  const day = rng.int(0, 81);
  let clock =
    FIRST_DAY_MS + day * 24 * HOUR + rng.int(7 * 60, 18 * 60) * MINUTE + rng.int(0, 59_999);
  const start = clock;
  // At most one long break inside a task per session (≈15 % of sessions).
  const breakable = tasks
    .map((task, index) => ({ task, index }))
    .filter(({ task }) => task.prompts.length >= 3);
  const longBreak =
    breakable.length > 0 && rng.chance(0.15)
      ? (() => {
          const { task, index } = rng.pick(breakable);
          return { task: index, prompt: rng.int(1, task.prompts.length - 1) };
        })()
      : null;
  const timed: TimedPrompt[] = [];
  tasks.forEach((task, taskIndex) => {
    task.prompts.forEach((prompt, promptIndex) => {
      let gap = 0;
      let { text, kind } = prompt;
      if (timed.length > 0) {
        if (promptIndex === 0) {
          gap = rng.chance(0.12)
            ? rng.logUniform(31 * MINUTE, 5 * HOUR)
            : rng.logUniform(20_000, 15 * MINUTE);
        } else if (longBreak && longBreak.task === taskIndex && longBreak.prompt === promptIndex) {
          gap = rng.logUniform(45 * MINUTE, 14 * HOUR);
          if (rng.chance(0.5)) {
            text = fillTemplate(rng.pick(RESUMES), task.slots);
            kind = 'resume';
          }
        } else {
          gap = rng.chance(0.08)
            ? rng.logUniform(6 * MINUTE, 25 * MINUTE)
            : rng.logUniform(6_000, 6 * MINUTE);
        }
        if (clock + gap - start > MAX_SESSION_SPAN_MS) gap = rng.logUniform(20_000, 10 * MINUTE);
        gap = Math.round(gap);
      }
      clock += gap;
      timed.push({ text: stylize(rng, text), kind, taskIndex, timestamp: clock, gapBefore: gap });
    });
  });
  return timed;
}

function categorize(
  prompt: TimedPrompt,
  index: number,
  tasks: DraftTask[],
  taskBags: Set<string>[],
  runningBag: Set<string>,
): PromptCategory[] {
  if (index === 0) return [];
  const categories: PromptCategory[] = [];
  const terse = wordCount(prompt.text) < 5;
  const longGap = prompt.gapBefore > LONG_GAP_MS;
  const keywords = benchKeywords(prompt.text);
  if (prompt.kind === 'opening') {
    const task = tasks[prompt.taskIndex];
    const previous = tasks[prompt.taskIndex - 1];
    if (terse) categories.push('terse-boundary');
    if (longGap) categories.push('long-gap-boundary');
    if (previous.module === task.module) categories.push('same-module-boundary');
    if (task.sibling) categories.push('sibling-boundary');
    const previousBag = taskBags[prompt.taskIndex - 1];
    const shared = [...keywords].filter((word) => previousBag.has(word)).length;
    if (keywords.size > 0 && shared / keywords.size >= 0.5) {
      categories.push('shared-vocabulary-boundary');
    }
    return categories;
  }
  if (terse) categories.push('terse-continuation');
  if (longGap) categories.push('long-gap-continuation');
  if (prompt.kind === 'resume') categories.push('resume-after-break');
  if (prompt.kind === 'correction') categories.push('correction');
  if (prompt.kind === 'paraphrase') categories.push('paraphrase-continuation');
  if (!terse && ![...keywords].some((word) => runningBag.has(word))) {
    categories.push('low-overlap-continuation');
  }
  return categories;
}

/** Generates the whole dataset in memory. */
export function generateDataset(options: GenerateOptions = {}): Dataset {
  const seed = String(options.seed ?? DEFAULT_SEED);
  const sessionCount = options.sessions ?? DEFAULT_SESSIONS;
  const root = new Rng(`engram-segmentation-bench:v${GENERATOR_VERSION}:${seed}`);
  const events: PromptSubmitted[] = [];
  const labels: GoldLabel[] = [];
  for (let s = 0; s < sessionCount; s++) {
    const rng = root.fork(`session-${s}`);
    const repo = rng.pick(REPOS);
    const userId = rng.pick(repo.users);
    const agentId = rng.pick(AGENTS);
    const sessionId = uuidv5(`session:${seed}:${s}`, BENCH_NAMESPACE);
    const tasks = draftSession(rng, repo);
    const timed = timeSession(rng, tasks);
    const taskBags = tasks.map(() => new Set<string>());
    for (const prompt of timed) {
      for (const word of benchKeywords(prompt.text)) taskBags[prompt.taskIndex].add(word);
    }
    let promptId = rng.int(1, 40);
    let runningBag = new Set<string>();
    timed.forEach((prompt, index) => {
      if (index > 0) promptId += rng.chance(0.25) ? 2 : 1;
      if (prompt.kind === 'opening') runningBag = new Set<string>();
      const categories = categorize(prompt, index, tasks, taskBags, runningBag);
      for (const word of benchKeywords(prompt.text)) runningBag.add(word);
      const eventId = uuidv5(`prompt:${sessionId}:${promptId}`, BENCH_NAMESPACE);
      events.push({
        eventId,
        tenantId: repo.tenantId,
        projectId: repo.name,
        sessionId,
        agentId,
        userId,
        timestamp: prompt.timestamp,
        schemaVersion: 1,
        promptId,
        source: 'user',
        channel: 'cli',
        channelKind: 'explicit',
        explicitThreadId: sessionId,
        text: prompt.text,
        methodology: null,
        methodologyPhase: null,
        workUnitRef: null,
        parentEpisodeId: null,
      });
      const task = tasks[prompt.taskIndex];
      labels.push({
        eventId,
        sessionId,
        promptId,
        goldBoundary: prompt.kind === 'opening',
        taskIndex: prompt.taskIndex,
        family: task.family,
        module: task.module,
        categories,
      });
    });
  }
  return { events, labels, stats: computeStats(seed, events, labels) };
}

export function computeStats(
  seed: string,
  events: PromptSubmitted[],
  labels: GoldLabel[],
): DatasetStats {
  const bySession = new Map<string, { events: PromptSubmitted[]; labels: GoldLabel[] }>();
  events.forEach((event, index) => {
    const group = bySession.get(event.sessionId) ?? { events: [], labels: [] };
    group.events.push(event);
    group.labels.push(labels[index]);
    bySession.set(event.sessionId, group);
  });
  const categories = Object.fromEntries(
    (
      [
        'terse-continuation',
        'terse-boundary',
        'long-gap-continuation',
        'long-gap-boundary',
        'resume-after-break',
        'correction',
        'paraphrase-continuation',
        'low-overlap-continuation',
        'same-module-boundary',
        'sibling-boundary',
        'shared-vocabulary-boundary',
      ] as const
    ).map((category) => [category, 0]),
  ) as Record<PromptCategory, number>;
  const families: Record<string, number> = {};
  const repositories: Record<string, number> = {};
  let tasks = 0;
  let boundaries = 0;
  let singlePromptSessions = 0;
  let singleTaskSessions = 0;
  let tersePrompts = 0;
  let withinTask = 0;
  let betweenTasks = 0;
  let maxTask = 0;
  const sizes: number[] = [];
  for (const group of bySession.values()) {
    sizes.push(group.events.length);
    repositories[group.events[0].projectId] = (repositories[group.events[0].projectId] ?? 0) + 1;
    const sessionTasks = group.labels.filter((label) => label.goldBoundary).length;
    tasks += sessionTasks;
    boundaries += sessionTasks - 1;
    if (group.events.length === 1) singlePromptSessions++;
    else if (sessionTasks === 1) singleTaskSessions++;
    let taskLength = 0;
    group.events.forEach((event, index) => {
      const label = group.labels[index];
      if (label.goldBoundary) {
        taskLength = 0;
        if (label.family) families[label.family] = (families[label.family] ?? 0) + 1;
      }
      taskLength++;
      maxTask = Math.max(maxTask, taskLength);
      if (wordCount(event.text) < 5) tersePrompts++;
      for (const category of label.categories ?? []) categories[category]++;
      if (index > 0 && event.timestamp - group.events[index - 1].timestamp > LONG_GAP_MS) {
        if (label.goldBoundary) betweenTasks++;
        else withinTask++;
      }
    });
  }
  const round = (value: number, digits = 2): number => Number(value.toFixed(digits));
  return {
    generatorVersion: GENERATOR_VERSION,
    seed,
    sessions: bySession.size,
    prompts: events.length,
    tasks,
    boundaries,
    singlePromptSessions,
    singleTaskSessions,
    promptsPerSession: {
      min: Math.min(...sizes),
      mean: round(events.length / Math.max(1, sizes.length)),
      max: Math.max(...sizes),
    },
    promptsPerTask: { mean: round(events.length / Math.max(1, tasks)), max: maxTask },
    tersePrompts,
    terseShare: round(tersePrompts / Math.max(1, events.length), 3),
    longGaps: { withinTask, betweenTasks },
    categories,
    families,
    repositories,
  };
}

// ---------------------------------------------------------------------------------------------
// Files

export interface DatasetFiles {
  dir: string;
  sessionsPath: string;
  labelsPath: string;
  manifestPath: string;
  stats: DatasetStats;
  /** True when an existing cached copy was reused. */
  reused: boolean;
}

interface Manifest {
  generatorVersion: number;
  /** Hash of the templates and vocabulary, so editing them invalidates a cached copy. */
  fingerprint: string;
  seed: string;
  sessions: number;
  sha256: { sessions: string; labels: string };
  stats: DatasetStats;
}

/** The repository root: the nearest ancestor with this repo's package.json. */
export function repoRoot(from: string = __dirname): string {
  let dir = resolve(from);
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'engram') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

export function defaultCacheDir(): string {
  return join(repoRoot(), '.cache', 'bench', 'segmentation');
}

export function toJsonl(items: readonly unknown[]): string {
  return items.map((item) => JSON.stringify(item)).join('\n') + '\n';
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Hash of everything the text is drawn from (logic changes still need GENERATOR_VERSION). */
export function generatorFingerprint(): string {
  return sha256(
    JSON.stringify({
      GENERATOR_VERSION,
      FAMILIES,
      REPOS,
      AGENTS,
      GENERIC_FOLLOWUPS,
      GENERIC_DISCUSSION_FOLLOWUPS,
      GENERIC_CORRECTIONS,
      TERSE_CONTINUATIONS,
      CLOSINGS,
      RESUMES,
    }),
  );
}

/**
 * Returns the dataset files in `cacheDir` (default `.cache/bench/segmentation/` of the repo),
 * generating them unless a copy of the same version, seed and size with intact checksums is there.
 */
export function ensureDataset(
  options: GenerateOptions & { cacheDir?: string; regenerate?: boolean } = {},
): DatasetFiles {
  const seed = String(options.seed ?? DEFAULT_SEED);
  const sessions = options.sessions ?? DEFAULT_SESSIONS;
  const dir = options.cacheDir ?? defaultCacheDir();
  const sessionsPath = join(dir, 'sessions.jsonl');
  const labelsPath = join(dir, 'labels.jsonl');
  const manifestPath = join(dir, 'manifest.json');
  if (!options.regenerate && existsSync(manifestPath)) {
    try {
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
      if (
        manifest.generatorVersion === GENERATOR_VERSION &&
        manifest.fingerprint === generatorFingerprint() &&
        manifest.seed === seed &&
        manifest.sessions === sessions &&
        sha256(readFileSync(sessionsPath, 'utf8')) === manifest.sha256.sessions &&
        sha256(readFileSync(labelsPath, 'utf8')) === manifest.sha256.labels
      ) {
        return { dir, sessionsPath, labelsPath, manifestPath, stats: manifest.stats, reused: true };
      }
    } catch {
      // unreadable or partial cache: regenerate
    }
  }
  const dataset = generateDataset({ seed, sessions });
  const sessionsText = toJsonl(dataset.events);
  const labelsText = toJsonl(dataset.labels);
  mkdirSync(dir, { recursive: true });
  writeFileSync(sessionsPath, sessionsText);
  writeFileSync(labelsPath, labelsText);
  const manifest: Manifest = {
    generatorVersion: GENERATOR_VERSION,
    fingerprint: generatorFingerprint(),
    seed,
    sessions,
    sha256: { sessions: sha256(sessionsText), labels: sha256(labelsText) },
    stats: dataset.stats,
  };
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
  return { dir, sessionsPath, labelsPath, manifestPath, stats: dataset.stats, reused: false };
}

/** Reads a JSON-lines file into its non-empty lines. */
export function readJsonlLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

function main(argv: string[]): void {
  const value = (flag: string): string | undefined => {
    const at = argv.indexOf(flag);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const sessions = value('--sessions');
  const files = ensureDataset({
    seed: value('--seed') ?? DEFAULT_SEED,
    sessions: sessions === undefined ? DEFAULT_SESSIONS : Number(sessions),
    cacheDir: value('--out'),
    regenerate: argv.includes('--regenerate'),
  });
  process.stdout.write(
    `${files.reused ? 'reused' : 'generated'} ${files.sessionsPath}\n` +
      `${JSON.stringify(files.stats, null, 2)}\n`,
  );
}

if (typeof require !== 'undefined' && require.main === module) main(process.argv.slice(2));
