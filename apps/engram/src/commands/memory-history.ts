import type { MemoryHistoryEntry, MemoryVersionChange } from '@engram/core';
import { count } from './cli-text';
import { memoryHistoryOnLog, type MemoryLifecycle } from './memory-lifecycle';

/** A command's outcome: what to print, and the exit code (no process state: testable). */
export interface MemoryCommandRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

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
