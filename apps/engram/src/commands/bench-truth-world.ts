import type { MemoryType } from '@engram/contracts';
import { random } from './bench-observe';
import {
  cap,
  COMPONENTS,
  CONVENTION_CUES,
  CONVENTIONS,
  DISTRACTORS,
  LIBRARIES,
  LOCKED_OPS,
  LOCKS,
  MODULES,
  PARSED,
  RENAME_GOTCHAS,
  REVERSAL_CUES,
  SWAP_CUES,
  TRANSPORTS,
} from './bench-truth-vocabulary';

// `engram bench truth`, the world: generated projects where facts change over time (issue #20).
// Pure and deterministic from the seed: which modules, files, libraries and rules each project
// has, what was first true, what changed (a commit renames or deletes a file; a decision is
// reversed; a dependency swapped; a convention replaced; a gotcha corrected), what is true at
// the end, and the questions that ask for the current fact. Times are offsets from `now`.

/** What changed about a fact: how the benchmark groups its figures. */
export const FACT_KINDS = [
  'file_renamed',
  'file_deleted',
  'decision_reversed',
  'dependency_swapped',
  'convention_replaced',
  'gotcha_corrected',
  'compatible_addition',
] as const;
export type FactKind = (typeof FACT_KINDS)[number];

/** A note taught to Engram (Remember by a person): its key names it in queries and checks. */
export interface TruthNote {
  key: string;
  memoryType: MemoryType;
  text: string;
  relatedFiles: string[];
  /** Event time, ms. */
  at: number;
}

export interface TruthCommit {
  key: string;
  at: number;
  sha: string;
  message: string;
  renamed: { from: string; to: string }[];
  deleted: string[];
}

/** A question whose answer is one note; `outdated` are the notes that were true once. */
export interface TruthQuery {
  kind: FactKind;
  query: string;
  current: string;
  outdated: string[];
}

/** A file an agent opens at the end: which notes must not be injected for it. */
export interface TruthFile {
  path: string;
  /** Notes that are outdated for this path (superseded, file deleted, or moved away from it). */
  outdated: string[];
}

export interface TruthProject {
  projectId: string;
  /** Notes taught before anything changed (oldest first). */
  before: TruthNote[];
  /** Questions asked while the old facts were true (they make the old notes used, proven). */
  uses: string[];
  /** What changed, in time order: commits and newer notes. */
  changes: (TruthNote | TruthCommit)[];
  queries: TruthQuery[];
  files: TruthFile[];
}

export const TRUTH_TENANT = 'bench-truth';
const DAY = 86_400_000;

/** The projects of a run: the same seed gives the same projects, notes and questions. */
export function truthWorld(seed: number, projects: number, now: number): TruthProject[] {
  return Array.from({ length: projects }, (_, i) => truthProject(seed, i, now));
}

function truthProject(seed: number, index: number, now: number): TruthProject {
  const rand = random(seed * 7_919 + index * 104_729 + 1);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const modules = shuffled(MODULES, rand);
  const [mRename, mDelete, mDecide, mPeer, mDep, mGotcha, mCompat, mCompatPeer] = modules;
  const projectId = `truth/repo-${index}`;
  const old = (n: number) => now - (90 - n) * DAY - Math.floor(rand() * DAY);
  const recent = (n: number) => now - (40 - n) * 3_600_000 - Math.floor(rand() * 3_600_000);
  const before: TruthNote[] = [];
  const changes: (TruthNote | TruthCommit)[] = [];
  const queries: TruthQuery[] = [];
  const files: TruthFile[] = [];
  const note = (key: string, memoryType: MemoryType, text: string, related: string[], at: number) =>
    ({ key, memoryType, text, relatedFiles: related, at }) satisfies TruthNote;

  // A file renamed: the gotcha moves with it.
  const component = pick(COMPONENTS);
  const renamedFrom = `src/${mRename}/${slug(component)}.ts`;
  const renamedTo = `src/${mRename}/internal/${slug(component)}-v2.ts`;
  before.push(
    note(
      'renamed',
      'gotcha',
      `The ${component} in ${mRename} ${pick(RENAME_GOTCHAS)}`,
      [renamedFrom],
      old(0),
    ),
  );
  // A legacy file deleted; a later gotcha about the file that replaced it.
  const parsed = pick(PARSED);
  const legacy = `src/${mDelete}/legacy-${slug(parsed)}-parser.ts`;
  const successor = `src/${mDelete}/${slug(parsed)}-parser.ts`;
  before.push(
    note(
      'deleted',
      'gotcha',
      `The legacy ${parsed} parser in ${mDelete} drops quoted values that contain semicolons`,
      [legacy],
      old(1),
    ),
  );
  // A decision, reversed later.
  const [transportA, transportB] = shuffled(TRANSPORTS, rand);
  before.push(
    note(
      'decision-old',
      'decision',
      `${cap(mDecide)} talks to ${mPeer} over ${transportA}`,
      [],
      old(2),
    ),
  );
  // A dependency, swapped later.
  const [area, libraries] = pick(LIBRARIES);
  const [libA, libB] = shuffled(libraries, rand);
  before.push(
    note(
      'dependency-old',
      'decision',
      `${cap(mDep)} uses ${libA} for ${area}`,
      ['package.json'],
      old(3),
    ),
  );
  // A convention, replaced later.
  const [topic, ruleA, ruleB] = pick(CONVENTIONS);
  before.push(
    note('convention-old', 'preference', `Convention for ${topic}: ${ruleA}`, [], old(4)),
  );
  // A gotcha about a file that stays, corrected later.
  const op = pick(LOCKED_OPS);
  const lock = pick(LOCKS);
  const lockedFile = `src/${mGotcha}/${slug(op)}.ts`;
  before.push(
    note(
      'gotcha-old',
      'gotcha',
      `${cap(op)} in ${mGotcha} must hold the ${lock} lock or two workers apply it twice`,
      [lockedFile],
      old(5),
    ),
  );
  // A fact with a compatible addition later: both stay true.
  before.push(
    note(
      'compatible-old',
      'decision',
      `${cap(mCompat)} retries calls to ${mCompatPeer} three times with exponential backoff`,
      [],
      old(6),
    ),
  );
  shuffled(DISTRACTORS, rand)
    .slice(0, 6)
    .forEach((template, i) => {
      const m = modules[8 + (i % (modules.length - 8))];
      before.push(
        note(
          `distractor-${i}`,
          'pattern',
          template.replaceAll('{m}', m),
          [`src/${m}/index.ts`],
          old(7 + i),
        ),
      );
    });

  changes.push({
    key: 'commit-1',
    at: recent(0),
    sha: sha(seed, index, 1),
    message: `refactor(${mRename}): move the ${component} under internal/; drop the legacy ${parsed} parser`,
    renamed: [{ from: renamedFrom, to: renamedTo }],
    deleted: [legacy],
  });
  changes.push(
    note(
      'deleted-successor',
      'gotcha',
      `The ${parsed} parser in ${mDelete} rejects quoted values longer than 4 KB and reports the line`,
      [successor],
      recent(1),
    ),
  );
  changes.push(
    note(
      'decision-new',
      'decision',
      pick(REVERSAL_CUES)(mDecide, mPeer, transportA, transportB),
      [],
      recent(2),
    ),
  );
  changes.push(
    note(
      'dependency-new',
      'decision',
      pick(SWAP_CUES)(mDep, area, libA, libB),
      ['package.json'],
      recent(3),
    ),
  );
  changes.push(
    note('convention-new', 'preference', pick(CONVENTION_CUES)(topic, ruleA, ruleB), [], recent(4)),
  );
  changes.push(
    note(
      'gotcha-new',
      'gotcha',
      `${cap(op)} in ${mGotcha} no longer needs the ${lock} lock: the job queue now runs it one at a time`,
      [lockedFile],
      recent(5),
    ),
  );
  changes.push(
    note(
      'compatible-new',
      'decision',
      `${cap(mCompat)} logs every retried call to ${mCompatPeer} with the request id`,
      [],
      recent(6),
    ),
  );

  queries.push(
    {
      kind: 'file_renamed',
      query: `what should I watch out for with the ${component} in ${mRename}`,
      current: 'renamed',
      outdated: [],
    },
    {
      kind: 'file_deleted',
      query: `known problems of the ${parsed} parser in ${mDelete}`,
      current: 'deleted-successor',
      outdated: ['deleted'],
    },
    {
      kind: 'decision_reversed',
      query: `how does ${mDecide} talk to ${mPeer}`,
      current: 'decision-new',
      outdated: ['decision-old'],
    },
    {
      kind: 'dependency_swapped',
      query: `which library does ${mDep} use for ${area}`,
      current: 'dependency-new',
      outdated: ['dependency-old'],
    },
    {
      kind: 'convention_replaced',
      query: `what is the convention for ${topic}`,
      current: 'convention-new',
      outdated: ['convention-old'],
    },
    {
      kind: 'gotcha_corrected',
      query: `does ${op} in ${mGotcha} need the ${lock} lock`,
      current: 'gotcha-new',
      outdated: ['gotcha-old'],
    },
    {
      kind: 'compatible_addition',
      query: `how many times does ${mCompat} retry calls to ${mCompatPeer}`,
      current: 'compatible-old',
      outdated: [],
    },
    {
      kind: 'compatible_addition',
      query: `does ${mCompat} log retried calls to ${mCompatPeer}`,
      current: 'compatible-new',
      outdated: [],
    },
  );
  files.push(
    { path: renamedFrom, outdated: ['renamed'] },
    { path: renamedTo, outdated: [] },
    { path: legacy, outdated: ['deleted'] },
    { path: successor, outdated: [] },
    { path: lockedFile, outdated: ['gotcha-old'] },
  );
  const uses = queries
    .filter((q) => q.outdated.length > 0 || q.kind === 'file_renamed')
    .map((q) => q.query);
  return { projectId, before, uses, changes, queries, files };
}

/** Every key outdated at the end of the project's history. */
export function outdatedKeys(project: TruthProject): Set<string> {
  return new Set(project.queries.flatMap((q) => q.outdated));
}

export function isCommit(change: TruthNote | TruthCommit): change is TruthCommit {
  return 'sha' in change;
}

function shuffled<T>(items: readonly T[], rand: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rand() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

function sha(seed: number, project: number, n: number): string {
  return ((seed * 1_000_003 + project * 97 + n) >>> 0).toString(16).padStart(8, '0').repeat(5);
}
