import { wordCount } from '../../segmentation/intent-keywords';
import { truncateChars } from '../tokens';
import { oneLine, type PromptEntry, type ToolEntry } from '../transcript';
import type { DistilledFact } from '../types';
import { listFiles } from './errors';

/**
 * Files modified and why (seed 001 🟡 "Files are modified and why (not the diff, the intent)"):
 * successful edits and writes grouped by the user prompt that led to them. The reason is that
 * prompt; a terse one ("yes", "ok do it") borrows the last substantive prompt before it.
 * Reads and searches never count; commands are covered by the error facts.
 */
const TERSE_WORDS = 5;
const MAX_REASON_CHARS = 200;

interface EditGroup {
  reason: PromptEntry | null;
  files: string[];
  edits: number;
  eventIds: string[];
  last: ToolEntry;
}

export function fileChangeFacts(
  tools: readonly ToolEntry[],
  userPrompts: readonly PromptEntry[],
): DistilledFact[] {
  const groups = new Map<string, EditGroup>();
  for (const entry of tools) {
    if (entry.command !== null || entry.activity !== 'execute' || entry.outcome !== 'ok') continue;
    if (entry.filePaths.length === 0) continue;
    const reason = reasonFor(entry.promptId, userPrompts);
    const key = reason?.eventId ?? '';
    const group = groups.get(key) ?? { reason, files: [], edits: 0, eventIds: [], last: entry };
    for (const path of entry.filePaths) if (!group.files.includes(path)) group.files.push(path);
    group.edits += 1;
    group.eventIds.push(entry.eventId);
    group.last = entry;
    groups.set(key, group);
  }
  return [...groups.values()].map((group) => ({
    priority: '🟡',
    time: group.last.time,
    at: group.last.timestamp,
    text: fileChangeText(group),
    kind: 'file-change',
    sourceEventIds:
      group.reason === null ? group.eventIds : [group.reason.eventId, ...group.eventIds],
    relatedFiles: group.files,
  }));
}

function fileChangeText(group: EditGroup): string {
  const edits = group.edits === 1 ? '1 edit' : `${group.edits} edits`;
  const base = `Modified ${listFiles(group.files)} (${edits})`;
  if (group.reason === null) return base;
  return `${base} for: "${truncateChars(oneLine(group.reason.text), MAX_REASON_CHARS)}"`;
}

/** The user prompt an edit serves, or the last substantive one before it when that is terse. */
function reasonFor(promptId: number, userPrompts: readonly PromptEntry[]): PromptEntry | null {
  let candidate: PromptEntry | null = null;
  for (const prompt of userPrompts) {
    if (prompt.promptId > promptId) break;
    if (prompt.text !== '' && (candidate === null || wordCount(prompt.text) >= TERSE_WORDS)) {
      candidate = prompt;
    }
    if (prompt.promptId === promptId && wordCount(prompt.text) >= TERSE_WORDS) return prompt;
  }
  return candidate;
}

/** 🟢 routine investigation: how much was read and searched, and where. */
export function explorationFact(tools: readonly ToolEntry[]): DistilledFact | null {
  const reads = tools.filter((entry) => entry.activity === 'investigate');
  if (reads.length === 0) return null;
  const files = [...new Set(reads.flatMap((entry) => entry.filePaths))];
  const last = reads[reads.length - 1];
  const where = files.length > 0 ? ` over ${listFiles(files, 3)}` : '';
  return {
    priority: '🟢',
    time: last.time,
    at: last.timestamp,
    text: `Explored the code: ${reads.length} reads and searches${where}`,
    kind: 'exploration',
    sourceEventIds: reads.map((entry) => entry.eventId),
    relatedFiles: files.slice(0, 10),
  };
}
