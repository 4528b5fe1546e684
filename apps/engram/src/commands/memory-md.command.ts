import { loadConfig } from '@engram/config';
import type { Memory, Typed } from '@engram/contracts';
import {
  CompactedView,
  curatedMemories,
  renderMemoryMd,
  type EventLogPort,
  type TopicCodec,
} from '@engram/core';
import type { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { distillerCodecs, prefixedDistillerTopics } from '@engram/app-distiller';
import { readCommandLog } from './command-event-log';
import { DEFAULT_DATA_DIR } from './replay.command';

export interface MemoryMdQuery {
  /** Absent: the only project with memories. */
  project?: string;
  /** Absent: the only tenant with that project. */
  tenant?: string;
  includeUnverified?: boolean;
}

/** What `engram memory-md --json` prints. */
export interface MemoryMdReport {
  tenant: string | null;
  project: string | null;
  /** Memories rendered (curated: user-verified, not stale, not session scratch). */
  memories: number;
  markdown: string;
}

/**
 * A project's curated memory as MEMORY.md (SPEC §8, §12): the latest version of each memory on
 * memory.memories.v1 (compacted), the project's, rendered by the core's renderMemoryMd — the
 * User, Hard Rules, System Architecture and Patterns sections, approved proposals included.
 */
export async function memoryMdReport(
  log: EventLogPort,
  codec: TopicCodec<Typed<'Memory'>>,
  query: MemoryMdQuery,
): Promise<MemoryMdReport> {
  const all: Memory[] = (await new CompactedView(log, codec, 100_000).refresh()).values();
  const project =
    query.project ??
    onlyOne(
      all.map((m) => m.projectId),
      'projects',
      '--project',
    );
  const ofProject = all.filter((m) => m.projectId === project);
  const tenant =
    query.tenant ??
    onlyOne(
      ofProject.map((m) => m.tenantId),
      'tenants',
      '--tenant',
    );
  const memories = ofProject.filter((m) => m.tenantId === tenant);
  const markdown = renderMemoryMd(memories, {
    ...(project !== null && { projectId: project }),
    includeUnverified: query.includeUnverified === true,
  });
  const rendered = curatedMemories(memories, {
    includeUnverified: query.includeUnverified === true,
  });
  return { tenant, project, memories: rendered.length, markdown };
}

function onlyOne(values: readonly string[], what: string, flag: string): string | null {
  const distinct = [...new Set(values)].sort();
  if (distinct.length > 1) {
    throw new Error(`several ${what} have memories (${distinct.join(', ')}): pass ${flag}`);
  }
  return distinct[0] ?? null;
}

interface MemoryMdOptions extends MemoryMdQuery {
  json?: boolean;
  out?: string;
  dataDir: string;
  distributed?: boolean;
}

function memoryMdOfNothing(query: MemoryMdQuery): MemoryMdReport {
  const markdown = renderMemoryMd(
    [],
    query.project === undefined ? {} : { projectId: query.project },
  );
  return { tenant: query.tenant ?? null, project: query.project ?? null, memories: 0, markdown };
}

export function registerMemoryMdCommand(program: Command): void {
  program
    .command('memory-md')
    .description(
      "a project's curated memory as a MEMORY.md (User, Hard Rules, System Architecture, Patterns)",
    )
    .option('--project <id>', 'the project (default: the only project with memories)')
    .option('--tenant <id>', 'the tenant (default: the only tenant with this project)')
    .option('--include-unverified', 'also memories nobody reviewed (default: user-verified only)')
    .option('--out <file>', 'write the Markdown to a file instead of stdout')
    .option('--json', 'print one JSON object {tenant, project, memories, markdown}')
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'read memory.memories.v1 from the configured Kafka instead')
    .action(async (options: MemoryMdOptions) => {
      const topics = prefixedDistillerTopics(loadConfig().topicPrefix);
      const report = await readCommandLog(
        { ...options, clientId: 'engram-memory-md' },
        topics.memories,
        (log) => memoryMdReport(log, distillerCodecs(topics).memories, options),
        () => memoryMdOfNothing(options),
      );
      if (options.out !== undefined) await writeFile(options.out, report.markdown, 'utf8');
      if (options.json) console.log(JSON.stringify(report));
      else if (options.out === undefined) process.stdout.write(report.markdown);
      else console.error(`wrote ${options.out} (${report.memories} memories)`);
    });
}
