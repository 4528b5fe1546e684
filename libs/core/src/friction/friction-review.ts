import type { EpochMillis, Proposal, ProposalStatus } from '@engram/contracts';
import { expiryOf } from '../distillation/proposals/review';
import { compactDay } from '../distillation/time';
import { idOf } from '../ids/deterministic-id';
import { frictionChange } from './friction-report';
import { FRICTION_KINDS, type FrictionKind, type FrictionProposal } from './friction-types';

/**
 * Friction proposals under review (SPEC §9, issue #21 "closing the loop"). They live on
 * memory.proposals.v1 next to the reflector's, as `kind: 'friction'` records keyed by their
 * `f-YYYYMMDD-NNN` id, so `engram review` and the review API list and decide both. Nobody but the
 * report and the reviewer writes them (no reflector owns them, and an approval promotes no
 * memory: the change is a file patch or a memory to retire, applied by a person).
 *
 * A record's `section` says which friction cluster it is, `<kind>:<cluster id>`: a re-run of the
 * report finds its earlier proposal by it (same id, decision kept), and the next report matches
 * recurrences to approved proposals by it.
 */

export const FRICTION_PROPOSAL_AGENT = 'engram-friction-report';

const FRICTION_ID = /^f-(\d{8})-(\d{3,})$/;

/** Whether an id is a friction proposal's (`f-YYYYMMDD-NNN`). */
export function isFrictionProposalId(id: string): boolean {
  return FRICTION_ID.test(id);
}

/**
 * What a friction is about across windows and detectors: its subject (a failing command, seen as
 * a recurring failure or a retry loop) when it has one, else its natural key.
 */
export function frictionClusterId(proposal: Pick<FrictionProposal, 'subject' | 'key'>): string {
  return proposal.subject ?? proposal.key;
}

/** The record's `section`: `<kind>:<cluster id>`. */
export function frictionSection(proposal: FrictionProposal): string {
  return `${proposal.kind}:${frictionClusterId(proposal)}`;
}

/** The kind and cluster id of a friction record's section, or null when it is not one. */
export function parseFrictionSection(
  section: string | null,
): { kind: FrictionKind; clusterId: string } | null {
  if (section === null) return null;
  const colon = section.indexOf(':');
  const kind = section.slice(0, colon) as FrictionKind;
  if (colon < 0 || !FRICTION_KINDS.includes(kind)) return null;
  return { kind, clusterId: section.slice(colon + 1) };
}

/**
 * A pending record is expired from its `expiresAt` on, whether or not anyone wrote so yet (the
 * review desk and the next report write it; both write the same record, stamped `expiresAt`).
 */
export function frictionStatusAt(record: Proposal, now: EpochMillis): ProposalStatus {
  return record.status === 'pending' && now >= record.expiresAt ? 'expired' : record.status;
}

/** The record as it stands at `now`: a pending one past its 7 days, expired. */
export function frictionRecordAt(record: Proposal, now: EpochMillis): Proposal {
  if (frictionStatusAt(record, now) === record.status) return record;
  return withState(record, 'expired', record.expiresAt, null);
}

/**
 * The record with a new state. Its eventId is a function of its whole content, so the same state
 * is the same event however often (and by whomever) it is written.
 */
function withState(
  record: Proposal,
  status: ProposalStatus,
  decidedAt: EpochMillis | null,
  by: string | null,
): Proposal {
  const at = decidedAt ?? record.createdAt;
  const next = { ...record, eventId: '', status, decidedAt, userId: by, timestamp: at };
  return { ...next, eventId: idOf('friction-proposal-record', JSON.stringify(next)) };
}

/** The record of a proposal under `id`, created at `createdAt` (7 days to review it). */
export function frictionProposalRecord(
  proposal: FrictionProposal,
  id: string,
  createdAt: EpochMillis,
): Proposal {
  const change = frictionChange(proposal, id);
  const text =
    change.kind === 'file' ? change.patch : `retire memory ${change.memoryId}: ${change.reason}`;
  const record: Proposal = {
    eventId: '',
    tenantId: proposal.tenantId,
    projectId: proposal.projectIds[0] ?? '',
    sessionId: proposal.evidence.sessionIds[0] ?? id,
    agentId: FRICTION_PROPOSAL_AGENT,
    userId: null,
    timestamp: createdAt,
    schemaVersion: 1,
    proposalId: id,
    kind: 'friction',
    status: 'pending',
    section: frictionSection(proposal),
    target: change.kind === 'file' ? change.file : 'memory',
    title: proposal.title,
    text,
    evidenceSessionIds: [...proposal.evidence.sessionIds],
    evidenceEpisodeIds: [],
    evidenceMemoryIds: [...proposal.evidence.memoryIds],
    evidenceEventIds: [...proposal.evidence.eventIds],
    severity: proposal.severity.score,
    createdAt,
    expiresAt: expiryOf(createdAt),
    decidedAt: null,
    promotedMemoryId: null,
  };
  return withState(record, 'pending', null, null);
}

export interface FrictionUpsert {
  /** Records to publish (new proposals, expiries written down). */
  records: Proposal[];
  /** The report's id → the id under review (the report shows the latter). */
  ids: Map<string, string>;
  /** The review status of each report id, at `now`. */
  statuses: Map<string, ProposalStatus>;
}

/**
 * A report's proposals as review records, against the proposals already on the topic. A cluster
 * already proposed keeps its id, its content and its decision: the report never rewrites a
 * proposal someone may be deciding at that moment (it reads the topic, then writes, with no lock
 * between: a rewrite could land after a decision and undo it). It writes new proposals, and the
 * expiry of a pending one past its 7 days (the same record whoever writes it). A cluster whose last
 * proposal expired before this window's day is proposed again under a new id (the expired one
 * stays listable). New ids continue after the highest `f-` id of the window's day on the topic,
 * in the report's rank order: the same report on the same topic gives the same ids and records,
 * so a re-run is an idempotent upsert.
 */
export function upsertFrictionProposals(
  proposals: readonly FrictionProposal[],
  existing: readonly Proposal[],
  now: EpochMillis,
  windowEnd: EpochMillis,
): FrictionUpsert {
  const day = compactDay(windowEnd - 1);
  const latest = new Map<string, Proposal>();
  let highest = 0;
  for (const record of existing) {
    const parsed = FRICTION_ID.exec(record.proposalId);
    if (record.kind !== 'friction' || parsed === null) continue;
    if (parsed[1] === day) highest = Math.max(highest, Number(parsed[2]));
    const cluster = parseFrictionSection(record.section);
    if (cluster === null) continue;
    const key = `${record.tenantId}\u0000${cluster.clusterId}`;
    const known = latest.get(key);
    if (known === undefined || record.createdAt > known.createdAt) latest.set(key, record);
  }
  const upsert: FrictionUpsert = { records: [], ids: new Map(), statuses: new Map() };
  for (const proposal of proposals) {
    const known = latest.get(`${proposal.tenantId}\u0000${frictionClusterId(proposal)}`);
    const stale =
      known !== undefined &&
      frictionStatusAt(known, now) === 'expired' &&
      compactDay(known.expiresAt) < day;
    if (known === undefined || stale) {
      highest += 1;
      const id = `f-${day}-${String(highest).padStart(3, '0')}`;
      upsert.records.push(frictionProposalRecord(proposal, id, now));
      upsert.ids.set(proposal.id, id);
      upsert.statuses.set(proposal.id, 'pending');
      continue;
    }
    const current = frictionRecordAt(known, now);
    if (current !== known) upsert.records.push(current);
    upsert.ids.set(proposal.id, known.proposalId);
    upsert.statuses.set(proposal.id, current.status);
  }
  return upsert;
}

export type FrictionDecisionAction = 'approve' | 'edit-and-approve' | 'reject';

export type FrictionDecision =
  | { ok: true; record: Proposal; changed: boolean }
  | { ok: false; code: 'invalid' | 'conflict'; message: string; record: Proposal };

/**
 * A reviewer's decision on a friction record at `now`: pending → approved | rejected. Deciding
 * again the same way changes nothing; deciding otherwise, or after the 7 days, is a conflict.
 * Editing is refused: the change is an exact patch (or a memory to retire), reviewed as it is.
 */
export function decideFrictionProposal(
  record: Proposal,
  action: FrictionDecisionAction,
  now: EpochMillis,
  by: string | null,
): FrictionDecision {
  if (action === 'edit-and-approve') {
    return {
      ok: false,
      code: 'invalid',
      message: `${record.proposalId} is a friction proposal: its change is exact, approve or reject it`,
      record,
    };
  }
  const wanted: ProposalStatus = action === 'approve' ? 'approved' : 'rejected';
  const current = frictionRecordAt(record, now);
  if (current.status === wanted) return { ok: true, record: current, changed: false };
  if (current.status !== 'pending') {
    const when =
      current.decidedAt === null ? '' : ` (${new Date(current.decidedAt).toISOString()})`;
    return {
      ok: false,
      code: 'conflict',
      message: `${record.proposalId} is already ${current.status}${when}`,
      record: current,
    };
  }
  return {
    ok: true,
    record: withState(current, wanted, Math.max(now, current.createdAt), by),
    changed: true,
  };
}
