import type { Memory, MemoryType } from '@engram/contracts';
import { sectionTag } from './proposals/promotion';
import { REFLECTION_SECTIONS, type ReflectionSection } from './proposals/types';
import { isoDay } from './time';

/** The section of memory types without a `section:` tag. */
const TYPE_SECTIONS: Partial<Record<MemoryType, ReflectionSection>> = {
  preference: 'User',
  requirement: 'Hard Rules',
  decision: 'System Architecture',
  module_insight: 'System Architecture',
  causal_dependency: 'System Architecture',
  prefetch_pattern: 'System Architecture',
};

export interface MemoryMdOptions {
  /** Named in the heading. */
  projectId?: string;
  /** Also render memories nobody verified (default false: curated means user-verified). */
  includeUnverified?: boolean;
}

/**
 * A project's curated memory as a MEMORY.md an agent can read (`engram memory-md`): the four
 * sections in a fixed order (each present, "_Nothing yet._" when empty), one line per memory,
 * `- (YYYY-MM-DD) content`, oldest first, then by id. Curated means user-verified, not stale and
 * not a work_state (session scratch). Deterministic: the same memories in any order give the same
 * bytes; no clock is read (the "last updated" date is the newest memory's).
 */
export function renderMemoryMd(memories: readonly Memory[], options: MemoryMdOptions = {}): string {
  const curated = curatedMemories(memories, options);
  const title = options.projectId === undefined ? '# MEMORY' : `# MEMORY — ${options.projectId}`;
  const newest = curated.reduce((max, m) => Math.max(max, m.createdAt), -Infinity);
  const lines = [
    title,
    '',
    curated.length === 0
      ? '_Curated by Engram: no memories yet._'
      : `_Curated by Engram: ${curated.length} ${curated.length === 1 ? 'memory' : 'memories'}, last updated ${isoDay(newest)}._`,
  ];
  for (const section of REFLECTION_SECTIONS) {
    const items = curated
      .filter((m) => memorySection(m) === section)
      .sort(
        (a, b) =>
          a.createdAt - b.createdAt ||
          (a.memoryId < b.memoryId ? -1 : a.memoryId > b.memoryId ? 1 : 0),
      );
    lines.push('', `## ${section}`, '');
    if (items.length === 0) lines.push('_Nothing yet._');
    for (const m of items) {
      lines.push(`- (${isoDay(m.createdAt)}) ${m.content.replace(/\s+/g, ' ').trim()}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The memories MEMORY.md renders: the latest version of each, user-verified (unless
 * includeUnverified), not stale, not a work_state.
 */
export function curatedMemories(
  memories: readonly Memory[],
  options: Pick<MemoryMdOptions, 'includeUnverified'> = {},
): Memory[] {
  return distinctById(memories).filter(
    (m) =>
      (m.userVerified || options.includeUnverified === true) &&
      m.staleAt === null &&
      m.memoryType !== 'work_state',
  );
}

/** The MEMORY.md section of a memory: its `section:` tag, else by type (default Patterns). */
export function memorySection(memory: Pick<Memory, 'tags' | 'memoryType'>): ReflectionSection {
  for (const section of REFLECTION_SECTIONS) {
    if (memory.tags.includes(sectionTag(section))) return section;
  }
  return TYPE_SECTIONS[memory.memoryType] ?? 'Patterns';
}

/** One memory per id: the latest record (then the greatest eventId), whatever the input order. */
function distinctById(memories: readonly Memory[]): Memory[] {
  const byId = new Map<string, Memory>();
  for (const memory of memories) {
    const existing = byId.get(memory.memoryId);
    const newer =
      existing === undefined ||
      memory.timestamp > existing.timestamp ||
      (memory.timestamp === existing.timestamp && memory.eventId > existing.eventId);
    if (newer) byId.set(memory.memoryId, memory);
  }
  return [...byId.values()];
}
