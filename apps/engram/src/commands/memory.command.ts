import {
  MEMORY_SCOPES,
  MEMORY_TYPES,
  type Memory,
  type MemoryScope,
  type MemoryType,
} from '@engram/contracts';
import {
  anyOfFilter,
  errorMessage,
  PRUNE_RULE,
  pruneCreatedBefore,
  prunedReason,
  prunedVersion,
  selectForPruning,
  type MemoryHistoryEntry,
  type MemoryVersionChange,
  type PruneCriteria,
} from '@engram/core';
import { InvalidArgumentError, type Command } from 'commander';
import {
  memoryHistoryOnLog,
  STORE_WINDOW,
  storedMemories,
  openMemoryLifecycle,
  type MemoryLifecycle,
} from './memory-lifecycle';
import { DEFAULT_DATA_DIR } from './replay.command';

/** A command's outcome: what to print, and the exit code (no process state: testable). */
export interface MemoryCommandRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

// ---- engram memory history ID ----

/** `engram memory history ID`: every version of the memory on the log, what changed and why. */
export async function runMemoryHistory(
  lifecycle: Pick<MemoryLifecycle, 'log' | 'codec' | 'stack'>,
  memoryId: string,
  options: { json?: boolean },
): Promise<MemoryCommandRun> {
  const { codec } = lifecycle;
  const entries = await memoryHistoryOnLog(lifecycle.log, codec, memoryId, lifecycle.stack.store);
  if (entries.length === 0) {
    return {
      stdout: '',
      stderr: `engram memory history: no memory ${memoryId} on ${codec.topic}`,
      exitCode: 3,
    };
  }
  const stdout = options.json
    ? JSON.stringify({ memoryId, topic: codec.topic, versions: entries.map(withoutVector) })
    : formatMemoryHistory(memoryId, entries);
  return { stdout, stderr: '', exitCode: 0 };
}

/** The history for people: one block per version, its changes indented under it. */
export function formatMemoryHistory(
  memoryId: string,
  entries: readonly MemoryHistoryEntry[],
): string {
  const first = entries.find((e) => e.memory !== null)?.memory;
  const what = first
    ? ` (${first.memoryType}, ${first.scope}; tenant ${first.tenantId}, project ${first.projectId})`
    : '';
  const lines = [`memory ${memoryId}${what}: ${count(entries.length, 'version', 'versions')}`];
  entries.forEach((entry, i) => {
    const at =
      entry.timestamp === null ? 'time not recorded' : new Date(entry.timestamp).toISOString();
    const kind = entry.memory === null ? 'tombstone' : `confidence ${entry.memory.confidence}`;
    const where =
      entry.source === 'store'
        ? 'retrieval store (derived, not on the log)'
        : `p${entry.partition}@${entry.offset}`;
    lines.push(`v${i + 1}  ${at}  ${where}  ${kind}`);
    for (const reason of entry.reasons) lines.push(`    why: ${reason}`);
    for (const change of entry.changes) {
      if (change.field === 'created' || change.field === 'deleted') continue;
      lines.push(`    ${formatChange(change)}`);
    }
    if (i === 0 && entry.memory !== null) {
      lines.push(`    content: ${JSON.stringify(entry.memory.content)}`);
    }
  });
  return lines.join('\n');
}

function formatChange(change: MemoryVersionChange): string {
  if (change.added !== undefined || change.removed !== undefined) {
    const parts = [
      ...(change.added ?? []).map((item) => `+ ${item}`),
      ...(change.removed ?? []).map((item) => `- ${item}`),
    ];
    return `${change.field}: ${parts.length > 0 ? parts.join(', ') : 'reordered'}`;
  }
  return `${change.field}: ${shown(change.field, change.from)} → ${shown(change.field, change.to)}`;
}

function shown(field: string, value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (field === 'staleAt' && typeof value === 'number') return new Date(value).toISOString();
  return typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : JSON.stringify(value);
}

/** A history entry without the version's embedding (hundreds of numbers saying nothing here). */
function withoutVector(entry: MemoryHistoryEntry): MemoryHistoryEntry {
  if (entry.memory === null) return entry;
  const { embedding, ...memory } = entry.memory;
  return { ...entry, memory: { ...memory, embedding: embedding === null ? null : [] } };
}

// ---- engram memory prune ----

export interface PruneRequest {
  criteria: PruneCriteria;
  tenantId: string;
  projectId: string;
  dryRun: boolean;
  /** The clock the selection ages memories by. */
  now: number;
  /** Recorded as the Feedback's userId. */
  by?: string;
  /** Told what the run could not cover (a store listing cut at its window). */
  warn?: (message: string) => void;
}

export interface PruneOutcome {
  memoryId: string;
  tenantId: string;
  projectId: string;
  memoryType: MemoryType;
  scope: MemoryScope;
  reason: string;
  content: string;
  status: 'would prune' | 'pruned' | 'failed';
  error?: string;
}

/**
 * Prunes the project's memories the core's rule selects (`selectForPruning`), never silently:
 * each gets a final version tagged `pruned:<reason>` and stale (on the log, so `engram memory
 * history` shows it), then its tombstone through Feedback DELETE — the path a person's delete
 * takes, which also takes it out of the retrieval store at once. The memories are read from the
 * retrieval store, which holds what the log does not: access times (idleness) and supersession.
 * A memory whose pruned version was written by an interrupted run only gets its tombstone.
 * `dryRun`: nothing is written.
 */
export async function pruneMemories(
  lifecycle: Pick<MemoryLifecycle, 'log' | 'codec' | 'stack' | 'hasTopic'>,
  request: PruneRequest,
): Promise<PruneOutcome[]> {
  if (!lifecycle.hasTopic) return [];
  const scope = { tenantId: request.tenantId, projectId: request.projectId };
  const { criteria } = request;
  // The store narrows to a superset of the rule's choice (an interrupted run's pruned versions
  // keep their createdAt, so they are among it); the rule decides.
  const memories = await storedMemories(lifecycle.stack.store, scope, null, [
    ...(criteria.types.length > 0 ? [anyOfFilter('memoryType', criteria.types)] : []),
    ...(criteria.scopes.length > 0 ? [anyOfFilter('scope', criteria.scopes)] : []),
    {
      kind: 'range',
      field: 'createdAt',
      lte: pruneCreatedBefore(criteria, PRUNE_RULE, request.now),
    },
  ]);
  if (memories.length >= STORE_WINDOW) {
    request.warn?.(
      `only the ${STORE_WINDOW} most recently written candidates were considered: ` +
        'run again, or narrow with --type/--scope',
    );
  }
  const unfinished = memories.flatMap((memory) => {
    const reason = prunedReason(memory);
    return reason === null ? [] : [{ memory, reason, resumed: true }];
  });
  const selected = selectForPruning(memories, request.criteria, PRUNE_RULE, request.now).map(
    (candidate) => ({ ...candidate, resumed: false }),
  );
  const outcomes: PruneOutcome[] = [];
  for (const { memory, reason, resumed } of [...unfinished, ...selected]) {
    const outcome = pruneOutcome(memory, reason);
    if (request.dryRun) {
      outcomes.push(outcome);
      continue;
    }
    try {
      if (!resumed) {
        const final = prunedVersion(memory, reason, request.now);
        // Who pruned it is kept on the version (a tombstone carries nothing).
        const by = request.by !== undefined && { userId: request.by };
        await lifecycle.log.publish(lifecycle.codec, [{ type: 'Memory', ...final, ...by }]);
      }
      await lifecycle.stack.feedback.feedback({
        ...scope,
        memoryId: memory.memoryId,
        action: 'delete',
        ...(request.by !== undefined && { userId: request.by }),
      });
      outcomes.push({ ...outcome, status: 'pruned' });
    } catch (error) {
      outcomes.push({ ...outcome, status: 'failed', error: errorMessage(error) });
    }
  }
  return outcomes;
}

/**
 * The tenant a command acts for: `--tenant`, else the only one with documents of the project
 * (null: the project has none). Several: `refuse` says the caller must choose.
 */
export async function tenantOfProject(
  lifecycle: Pick<MemoryLifecycle, 'tenantsWithProject'>,
  projectId: string,
  tenant: string | undefined,
  refuse: (message: string) => Error = (message) => new InvalidArgumentError(message),
): Promise<string | null> {
  if (tenant !== undefined) return tenant;
  const tenants = await lifecycle.tenantsWithProject(projectId);
  if (tenants.length > 1) {
    throw refuse(
      `several tenants have project ${projectId} (${tenants.join(', ')}): pass --tenant`,
    );
  }
  return tenants[0] ?? null;
}

function pruneOutcome(memory: Memory, reason: string): PruneOutcome {
  return {
    memoryId: memory.memoryId,
    tenantId: memory.tenantId,
    projectId: memory.projectId,
    memoryType: memory.memoryType,
    scope: memory.scope,
    reason,
    content: memory.content,
    status: 'would prune',
  };
}

/** The outcomes for people: one line per memory, failures with their reason. */
export function formatPrune(outcomes: readonly PruneOutcome[], dryRun: boolean): string {
  if (outcomes.length === 0) return 'nothing to prune';
  const pruned = outcomes.filter((o) => o.status !== 'failed').length;
  const head = dryRun
    ? `would prune ${count(outcomes.length, 'memory', 'memories')} (dry run: nothing written)`
    : `pruned ${count(pruned, 'memory', 'memories')}` +
      (pruned < outcomes.length ? `, ${outcomes.length - pruned} failed` : '') +
      ' (final version tagged pruned:<reason>, then a tombstone; see `engram memory history ID`)';
  const lines = [head];
  for (const o of outcomes) {
    const text = o.content.length > 80 ? `${o.content.slice(0, 79)}…` : o.content;
    const failed = o.status === 'failed' ? ` FAILED: ${o.error}` : '';
    lines.push(
      `- \`${o.memoryId}\` ${o.projectId} ${o.memoryType}/${o.scope} [${o.reason}]: ${text}${failed}`,
    );
  }
  return lines.join('\n');
}

// ---- option parsing ----

/** `90d`, `12w`, `90` (days) → days. */
export function parseDays(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([dw]?)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('must be a duration like 90d or 12w');
  const days = Number(match[1]) * (match[2] === 'w' ? 7 : 1);
  if (!(days > 0)) throw new InvalidArgumentError('must be longer than 0 days');
  return days;
}

export function parseConfidence(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1) {
    throw new InvalidArgumentError('must be a number in (0, 1]');
  }
  return n;
}

function listOf<T extends string>(allowed: readonly T[]) {
  return (value: string, previous: T[] = []): T[] => {
    const items = value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    for (const item of items) {
      if (!(allowed as readonly string[]).includes(item)) {
        throw new InvalidArgumentError(`must be one of ${allowed.join(', ')}, got ${item}`);
      }
    }
    return [...previous, ...(items as T[])];
  };
}

interface ModeOptions {
  dataDir: string;
  distributed?: boolean;
  json?: boolean;
}

interface PruneOptions extends ModeOptions {
  scope?: MemoryScope[];
  type?: MemoryType[];
  olderThan?: number;
  belowConfidence?: number;
  stale?: boolean;
  dryRun?: boolean;
  project: string;
  tenant?: string;
  by?: string;
}

function print(run: MemoryCommandRun): void {
  if (run.stdout !== '') console.log(run.stdout);
  if (run.stderr !== '') console.error(run.stderr);
  process.exitCode = run.exitCode;
}

async function withLifecycle<T>(
  options: ModeOptions,
  clientId: string,
  use: (lifecycle: MemoryLifecycle) => Promise<T>,
): Promise<T> {
  const lifecycle = await openMemoryLifecycle({ ...options, clientId });
  try {
    return await use(lifecycle);
  } finally {
    await lifecycle.close();
  }
}

function withModeOptions(command: Command): Command {
  return command
    .option('--json', 'print one JSON object')
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'use the configured Kafka and Elasticsearch instead');
}

/** `engram memory history ID` and `engram memory prune` (issue #20: a lifecycle you can audit). */
export function registerMemoryCommand(program: Command): void {
  const memory = program
    .command('memory')
    .description(
      "long-term memories' lifecycle: every version of one, and pruning with an audit trail",
    );
  withModeOptions(memory.command('history <id>'))
    .description('every version of a memory in log order: what changed and why (tombstones too)')
    .action((id: string, options: ModeOptions) =>
      withLifecycle(options, 'engram-memory-history', async (lifecycle) => {
        if (!lifecycle.hasTopic) {
          print({
            stdout: '',
            stderr: `engram memory history: no memories yet (${lifecycle.codec.topic})`,
            exitCode: 3,
          });
          return;
        }
        print(await runMemoryHistory(lifecycle, id, options));
      }),
    );
  withModeOptions(memory.command('prune'))
    .description(
      'prune memories (seed 002 §13 rules, or the criteria given, all of which must hold): each gets a final version tagged pruned:<reason>, then a tombstone; never what a person confirmed',
    )
    .option(
      '--scope <scope>',
      `only these scopes (${MEMORY_SCOPES.join(', ')}); repeat or comma-separate`,
      listOf(MEMORY_SCOPES),
    )
    .option(
      '--type <type>',
      'only these memory types; repeat or comma-separate',
      listOf(MEMORY_TYPES),
    )
    .option(
      '--older-than <duration>',
      'idle (neither created nor accessed) at least this long: 90d, 12w',
      parseDays,
    )
    .option(
      '--below-confidence <n>',
      "confidence, decayed by the type's half-life, below n",
      parseConfidence,
    )
    .option('--stale', 'stale (files gone, outdated) or superseded')
    .option('--dry-run', 'list what would be pruned; write nothing')
    .requiredOption('--project <id>', 'the project whose memories are pruned')
    .option('--tenant <id>', 'the tenant (default: the only one with this project)')
    .option('--by <name>', 'who prunes, recorded as the userId of the deletion')
    .action((options: PruneOptions) =>
      withLifecycle(options, 'engram-memory-prune', async (lifecycle) => {
        const dryRun = options.dryRun ?? false;
        const tenantId = await tenantOfProject(lifecycle, options.project, options.tenant);
        const outcomes =
          tenantId === null
            ? []
            : await pruneMemories(lifecycle, {
                criteria: {
                  scopes: options.scope ?? [],
                  types: options.type ?? [],
                  olderThanDays: options.olderThan ?? null,
                  belowConfidence: options.belowConfidence ?? null,
                  stale: options.stale ?? false,
                },
                tenantId,
                projectId: options.project,
                ...(options.by !== undefined && { by: options.by }),
                dryRun,
                now: Date.now(),
                warn: (message) => console.error(`engram memory prune: ${message}`),
              });
        const failed = outcomes.some((o) => o.status === 'failed');
        print({
          stdout: options.json
            ? JSON.stringify({ dryRun, outcomes })
            : formatPrune(outcomes, dryRun),
          stderr: '',
          exitCode: failed ? 1 : 0,
        });
      }),
    );
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
