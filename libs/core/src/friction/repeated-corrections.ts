import type { EpochMillis } from '@engram/contracts';
import { classifyAssertions, statementOf } from '../distillation/extractive/assertions';
import { idOf } from '../ids/deterministic-id';
import { intentKeywords, jaccardOfUnique } from '../segmentation/intent-keywords';
import { frictionConfidence, frictionCost, isoDate, oneLineCut, sample } from './friction-findings';
import type { FrictionSettings } from './friction-settings';
import type { FrictionDayCount, FrictionFinding } from './friction-types';

/** What the user told the agent: a correction ("no, use X") or a rule ("always/never …"). */
export interface UserCorrection {
  kind: 'correction' | 'rule';
  /** The user's sentence as a statement (opening "no,"/"actually" gone). */
  statement: string;
}

/**
 * The first correction, else the first rule, of a user prompt (the distiller's classification,
 * `classifyAssertions`), or null. Questions, decisions and chatter are not friction.
 */
export function userCorrectionOf(text: string): UserCorrection | null {
  const assertions = classifyAssertions(text);
  const chosen =
    assertions.find((a) => a.kind === 'correction') ?? assertions.find((a) => a.kind === 'rule');
  if (chosen === undefined) return null;
  return { kind: chosen.kind as UserCorrection['kind'], statement: statementOf(chosen.sentence) };
}

/** One user prompt that corrected the agent (the adapter streams these). */
export interface CorrectionRow extends UserCorrection {
  tenantId: string;
  projectId: string;
  sessionId: string;
  eventId: string;
  agentId: string;
  at: EpochMillis;
}

interface Cluster {
  key: string;
  tenantId: string;
  projectId: string;
  /** Distinct keyword sets of members (at most MAX_REPRESENTATIVES): what rows are compared with. */
  representatives: string[][];
  /** The cluster this one was merged into (null: a root). */
  mergedInto: number | null;
  statements: Map<string, number>;
  kinds: Set<UserCorrection['kind']>;
  sessionIds: Set<string>;
  eventIds: string[];
  agentIds: Set<string>;
  firstAt: EpochMillis;
  lastAt: EpochMillis;
  occurrences: number;
  /** `YYYY-MM-DD` → corrections that day. */
  days: Map<string, number>;
}

const MAX_EVENT_IDS_KEPT = 200;
const MAX_STATEMENT_CHARS = 200;
const MAX_REPRESENTATIVES = 8;
/** Two statements sharing one keyword are not the same correction. */
const MIN_SHARED_KEYWORDS = 2;
/**
 * Words any correction may use ("that's not what I meant", "you got it wrong", "don't"): they say
 * that the user corrects, not what about, so they do not make two corrections alike. Stemmed
 * like the keywords.
 */
const CORRECTION_FILLER = new Set(
  intentKeywords(
    'meant mean wanted want said say asked ask wrong right correct incorrect thing things ' +
      "instead actually misunderstood understand told tell again not don't",
  ),
);

/** The keywords of a statement that say what it is about. */
function correctionKeywords(statement: string): string[] {
  return intentKeywords(statement).filter((keyword) => !CORRECTION_FILLER.has(keyword));
}

function keywordsAlike(a: readonly string[], b: readonly string[], similarity: number): boolean {
  const score = jaccardOfUnique(a, b);
  if (score === 1) return true;
  const shared = Math.round((score * (a.length + b.length)) / (1 + score));
  return score >= similarity && shared >= MIN_SHARED_KEYWORDS;
}

/**
 * Whether two statements are the same correction, as the clusters decide it (the next report
 * matches a correction to an approved proposal's line with it).
 */
export function correctionsAlike(a: string, b: string, similarity: number): boolean {
  const keywordsOfA = correctionKeywords(a);
  const keywordsOfB = correctionKeywords(b);
  return (
    keywordsOfA.length > 0 &&
    keywordsOfB.length > 0 &&
    keywordsAlike(keywordsOfA, keywordsOfB, similarity)
  );
}

/**
 * Repeated corrections: the user telling the agents the same thing (a correction or a rule) in
 * several sessions of one project — what they should not have had to say twice. Rows are added
 * one at a time (streamed). A row is similar to a cluster when its keywords and one of the
 * cluster's representative keyword sets are at least `correctionSimilarity` similar (Jaccard) and
 * share two keywords (or are the same set); it joins the similar cluster, and when it is similar
 * to several they merge (single link: "use pnpm, not npm" and "stop running npm, we use pnpm" join
 * through a third phrasing). Candidates come from a keyword index, so adding stays cheap with
 * many clusters. Add rows in a stable order (time, then event id) for deterministic clusters.
 */
export class CorrectionClusters {
  private readonly clusters: Cluster[] = [];
  /** `tenant\0project\0keyword` → indexes of clusters with a representative holding it. */
  private readonly byKeyword = new Map<string, number[]>();

  constructor(private readonly settings: FrictionSettings) {}

  add(row: CorrectionRow): void {
    const keywords = correctionKeywords(row.statement);
    if (keywords.length === 0) return;
    const scope = `${row.tenantId}\u0000${row.projectId}\u0000`;
    const candidates = new Set<number>();
    for (const keyword of keywords) {
      for (const index of this.byKeyword.get(scope + keyword) ?? []) {
        candidates.add(this.root(index));
      }
    }
    const similar = [...candidates]
      .filter((index) =>
        this.clusters[index].representatives.some((rep) => this.similar(rep, keywords)),
      )
      .sort((a, b) => a - b);
    let index: number;
    if (similar.length === 0) {
      index = this.open(row);
    } else {
      index = similar[0];
      for (const other of similar.slice(1)) this.merge(index, other, scope);
    }
    const cluster = this.clusters[index];
    this.represent(index, keywords, scope);
    const statement = oneLineCut(row.statement, MAX_STATEMENT_CHARS);
    cluster.statements.set(statement, (cluster.statements.get(statement) ?? 0) + 1);
    cluster.kinds.add(row.kind);
    cluster.sessionIds.add(row.sessionId);
    if (cluster.eventIds.length < MAX_EVENT_IDS_KEPT) cluster.eventIds.push(row.eventId);
    cluster.agentIds.add(row.agentId);
    cluster.firstAt = Math.min(cluster.firstAt, row.at);
    cluster.lastAt = Math.max(cluster.lastAt, row.at);
    cluster.occurrences += 1;
    const day = isoDate(row.at);
    cluster.days.set(day, (cluster.days.get(day) ?? 0) + 1);
  }

  private similar(a: readonly string[], b: readonly string[]): boolean {
    return keywordsAlike(a, b, this.settings.correctionSimilarity);
  }

  private root(index: number): number {
    let at = index;
    while (this.clusters[at].mergedInto !== null) at = this.clusters[at].mergedInto!;
    return at;
  }

  private open(row: CorrectionRow): number {
    return (
      this.clusters.push({
        key: idOf('friction', 'repeated-correction', row.tenantId, row.projectId, row.eventId),
        tenantId: row.tenantId,
        projectId: row.projectId,
        representatives: [],
        mergedInto: null,
        statements: new Map(),
        kinds: new Set(),
        sessionIds: new Set(),
        eventIds: [],
        agentIds: new Set(),
        firstAt: row.at,
        lastAt: row.at,
        occurrences: 0,
        days: new Map(),
      }) - 1
    );
  }

  /** Keeps `keywords` as a representative of cluster `index` (when new and there is room). */
  private represent(index: number, keywords: string[], scope: string): void {
    const cluster = this.clusters[index];
    if (cluster.representatives.length >= MAX_REPRESENTATIVES) return;
    const key = [...keywords].sort().join(' ');
    if (cluster.representatives.some((rep) => [...rep].sort().join(' ') === key)) return;
    cluster.representatives.push(keywords);
    for (const keyword of keywords) {
      const list = this.byKeyword.get(scope + keyword);
      if (list === undefined) this.byKeyword.set(scope + keyword, [index]);
      else if (!list.includes(index)) list.push(index);
    }
  }

  /** Merges cluster `from` into `into` (both roots of one project). */
  private merge(into: number, from: number, scope: string): void {
    const target = this.clusters[into];
    const source = this.clusters[from];
    source.mergedInto = into;
    for (const rep of source.representatives) this.represent(into, rep, scope);
    for (const [statement, count] of source.statements) {
      target.statements.set(statement, (target.statements.get(statement) ?? 0) + count);
    }
    for (const kind of source.kinds) target.kinds.add(kind);
    for (const session of source.sessionIds) target.sessionIds.add(session);
    for (const event of source.eventIds) {
      if (target.eventIds.length < MAX_EVENT_IDS_KEPT) target.eventIds.push(event);
    }
    for (const agent of source.agentIds) target.agentIds.add(agent);
    target.firstAt = Math.min(target.firstAt, source.firstAt);
    target.lastAt = Math.max(target.lastAt, source.lastAt);
    target.occurrences += source.occurrences;
    for (const [day, count] of source.days) {
      target.days.set(day, (target.days.get(day) ?? 0) + count);
    }
  }

  /** The clusters that were not merged into another. */
  private roots(): Cluster[] {
    return this.clusters.filter((cluster) => cluster.mergedInto === null);
  }

  /** Corrections per day of the clusters that are findings (the timeline chart). */
  timeline(): FrictionDayCount[] {
    const days = new Map<string, number>();
    for (const cluster of this.roots()) {
      if (cluster.sessionIds.size < this.settings.minSessionsPerFinding) continue;
      for (const [day, count] of cluster.days) days.set(day, (days.get(day) ?? 0) + count);
    }
    return [...days]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([day, count]) => ({ day, kind: 'repeated-correction', count }));
  }

  /** The clusters seen in at least `minSessionsPerFinding` sessions. */
  findings(): FrictionFinding[] {
    const { settings } = this;
    const findings: FrictionFinding[] = [];
    for (const cluster of this.roots()) {
      const sessions = cluster.sessionIds.size;
      if (sessions < settings.minSessionsPerFinding) continue;
      // The statement said most often (ties: the shortest, then alphabetical) stands for all.
      const [statement] = [...cluster.statements].sort(
        ([a, n], [b, m]) => m - n || a.length - b.length || a.localeCompare(b),
      )[0];
      const what = cluster.kinds.has('correction') ? 'corrected the agent' : 'restated a rule';
      findings.push({
        kind: 'repeated-correction',
        key: cluster.key,
        subject: null,
        alsoSeenAs: [],
        tenantId: cluster.tenantId,
        projectIds: [cluster.projectId],
        title: `Said again and again: "${oneLineCut(statement, 100)}"`,
        summary:
          `The user ${what} ${cluster.occurrences} times in ${sessions} sessions ` +
          `(${isoDate(cluster.firstAt)} – ${isoDate(cluster.lastAt)}): "${statement}".`,
        sessions,
        firstAt: cluster.firstAt,
        lastAt: cluster.lastAt,
        // A correction is a turn the agent spent going the wrong way: no measured duration.
        cost: frictionCost(
          { occurrences: cluster.occurrences, durationMs: 0, tokens: 0 },
          settings,
        ),
        evidence: {
          sessionIds: sample(cluster.sessionIds, settings.maxEvidence),
          eventIds: sample(cluster.eventIds, settings.maxEvidence),
          memoryIds: [],
        },
        agentIds: sample(cluster.agentIds, Infinity),
        proposedLines: [`- ${statement}${/[.!]$/.test(statement) ? '' : '.'}`],
        memoryId: null,
        confidence: frictionConfidence(sessions, settings.minSessionsPerFinding, 0.5),
      });
    }
    return findings;
  }
}
