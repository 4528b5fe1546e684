import type { EngramConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import {
  approvedFrictionIn,
  CompactedView,
  frictionChange,
  frictionRecurrence,
  recurrenceMarkdown,
  upsertFrictionProposals,
  withRecurrenceHtml,
  type FrictionRecurrence,
  type FrictionReport,
  type FrictionSettings,
  type FrictionWindow,
} from '@engram/core';
import { embeddedFrictionReviewStore, type FrictionReviewStore } from './friction-review-store';

/**
 * Closing the loop (issue #21): a report's proposals go to review on memory.proposals.v1, where
 * `engram review` and the review API list and decide them with the reflector's; and the report
 * says, for every approved proposal in its scope, whether its friction recurred since approval.
 * The decisions are core's (friction-review.ts, friction-recurrence.ts); this module reads and
 * writes the topic and runs the report over the spans since approval.
 */

export interface FrictionLoopOptions {
  /** The review clock: new proposals' creation and 7 days, expiries (default Date.now). */
  now: number;
  /** The report over another window, scope unchanged, with these thresholds (null: refused). */
  reportOver(window: FrictionWindow, settings: FrictionSettings): Promise<FrictionReport | null>;
  settings: FrictionSettings;
}

export interface FrictionLoopOutcome {
  /** The report with the ids its proposals have in review. */
  report: FrictionReport;
  recurrence: FrictionRecurrence[];
  /** Records written to the proposals topic (new proposals, expiries). */
  written: number;
}

/**
 * Publishes the report's proposals for review (an idempotent upsert: see
 * upsertFrictionProposals) and checks every approved proposal of the scope for recurrence: one
 * report per distinct approval time over [approval, end of the window), thresholds at one
 * session (once is a recurrence) and no minimum of data.
 */
export async function closeFrictionLoop(
  report: FrictionReport,
  store: FrictionReviewStore,
  options: FrictionLoopOptions,
): Promise<FrictionLoopOutcome> {
  const view = new CompactedView(store.port, store.proposals);
  await view.refresh();
  const upsert = upsertFrictionProposals(
    report.proposals,
    view.values(),
    options.now,
    report.window.to,
  );
  if (upsert.records.length > 0) {
    await store.port.publish(
      store.proposals,
      upsert.records.map((record) => ({ type: 'Proposal' as const, ...record })),
    );
    await view.refresh();
  }
  const proposals = report.proposals.map((proposal) => {
    const id = upsert.ids.get(proposal.id) ?? proposal.id;
    return { ...proposal, id, change: frictionChange(proposal, id) };
  });
  return {
    report: { ...report, proposals },
    recurrence: await recurrenceOf(report, view.values(), options),
    written: upsert.records.length,
  };
}

async function recurrenceOf(
  report: FrictionReport,
  records: readonly Typed<'Proposal'>[],
  options: FrictionLoopOptions,
): Promise<FrictionRecurrence[]> {
  const approved = approvedFrictionIn(records, report.scope);
  const checkedUntil = report.window.to;
  const once: FrictionSettings = {
    ...options.settings,
    minSessions: 0,
    minEvents: 0,
    minSessionsPerFinding: 1,
  };
  const since = new Map<number, FrictionReport['proposals']>();
  for (const approvedAt of new Set(approved.map((a) => a.approvedAt))) {
    if (approvedAt >= checkedUntil) continue;
    const found = await options.reportOver({ from: approvedAt, to: checkedUntil }, once);
    since.set(approvedAt, found?.proposals ?? []);
  }
  return approved.map((a) =>
    frictionRecurrence(a, since.get(a.approvedAt) ?? [], checkedUntil, {
      correctionSimilarity: options.settings.correctionSimilarity,
      maxEvidence: options.settings.maxEvidence,
    }),
  );
}

/**
 * A format's text with the recurrence section: appended to the Markdown, before the end of the
 * HTML page's body, as `recurrence` in the JSON (null: not checked, the text as it was).
 */
export function withRecurrence(
  text: string,
  format: 'md' | 'json' | 'html',
  recurrence: readonly FrictionRecurrence[] | null,
): string {
  if (recurrence === null) return text;
  switch (format) {
    case 'md':
      return `${text.trimEnd()}\n\n${recurrenceMarkdown(recurrence)}`;
    case 'html':
      return withRecurrenceHtml(text, recurrence);
    case 'json':
      return `${JSON.stringify({ ...(JSON.parse(text) as object), recurrence }, null, 2)}\n`;
  }
}

/** What the command asks of the review step. */
export interface FrictionReviewStepOptions {
  /** false (`--no-review`): neither publish nor check recurrence; the report stays read-only. */
  review: boolean;
  /** On the configured Kafka (`reportOver` then reads the servers too), else the data dir. */
  distributed?: boolean;
  dataDir: string;
}

/**
 * The command's review step: the proposals published for review — on the data directory's log,
 * or with `distributed` on the configured Kafka — and the recurrence of approved ones (null
 * recurrence: not checked, `--no-review`).
 */
export async function reviewFrictionReport(
  report: FrictionReport,
  options: FrictionReviewStepOptions,
  settings: FrictionSettings,
  reportOver: FrictionLoopOptions['reportOver'],
  config: Pick<EngramConfig, 'topicPrefix' | 'segmenter' | 'kafka' | 'schemaRegistry'>,
): Promise<{ report: FrictionReport; recurrence: FrictionRecurrence[] | null; note: string }> {
  if (!options.review) return { report, recurrence: null, note: '' };
  // Kafka's client is loaded only when the report runs on the servers.
  const store = options.distributed
    ? await (await import('./friction-review-kafka')).kafkaFrictionReviewStore(config)
    : await embeddedFrictionReviewStore(options.dataDir, config);
  try {
    const loop = await closeFrictionLoop(report, store, { now: Date.now(), reportOver, settings });
    const recurred = loop.recurrence.filter((r) => r.recurred).length;
    return {
      report: loop.report,
      recurrence: loop.recurrence,
      note:
        `${loop.report.proposals.length} proposals in review (${loop.written} written; ` +
        '`engram review list`); ' +
        `${recurred} of ${loop.recurrence.length} approved proposals recurred since approval`,
    };
  } finally {
    await store.close();
  }
}
