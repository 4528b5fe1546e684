import { MEMORY_SCOPES, MEMORY_TYPES, type MemoryScope, type MemoryType } from '@engram/contracts';
import type { Command } from 'commander';
import { listOf, parseConfidence, parseDays } from './command-options';
import { runMemoryHistory, type MemoryCommandRun } from './memory-history';
import { openMemoryLifecycle, tenantOfProject, type MemoryLifecycle } from './memory-lifecycle';
import { formatPrune, pruneMemories } from './memory-prune';
import { DEFAULT_DATA_DIR } from './replay.command';

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
