import { wordCount } from '../../segmentation/intent-keywords';
import { truncateChars } from '../tokens';
import { oneLine, type PromptEntry, type ToolEntry } from '../transcript';
import type { DistilledFact } from '../types';
import { requestAsAction } from './actions';
import { classifySentence, sentencesOf } from './assertions';
import { listFiles } from './errors';

/**
 * What was changed (seed 001 🟡 "Files are modified and why (not the diff, the intent)"):
 * successful edits and writes grouped by the user prompt that led to them (a terse prompt, "yes",
 * "ok do it", borrows the last substantive one before it). A request that asks for an action
 * becomes a report of it, the state a reader needs later: "Added rate limiting to the product
 * search endpoint (20 requests per minute per ip); edited src/api/search.ts, src/api/middleware.ts"
 * (🟡). Edits that serve a correction, rule or decision of the user are that assertion's fact,
 * and edits that serve no recognisable request are bookkeeping: both are kept at 🟢 only (the
 * memory store keeps 🟡 and above), so "Edited X for: …" never crowds recall.
 * Reads and searches never count; commands are covered by the error facts.
 */
const TERSE_WORDS = 5;
const MAX_REASON_CHARS = 200;
const MAX_FILES = 3;

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
  return [...groups.values()].map((group) => {
    const change = changeText(group);
    return {
      priority: change.reported ? '🟡' : '🟢',
      time: group.last.time,
      at: group.last.timestamp,
      text: change.text,
      kind: 'file-change',
      sourceEventIds:
        group.reason === null ? group.eventIds : [group.reason.eventId, ...group.eventIds],
      relatedFiles: group.files,
    };
  });
}

/** The change as a report of the request it served, or as 🟢 bookkeeping. */
function changeText(group: EditGroup): { text: string; reported: boolean } {
  const files = `edited ${listFiles(group.files, MAX_FILES)}`;
  // The sentences that state a correction, rule or decision are their own facts.
  const request = sentencesOf(group.reason?.text ?? '')
    .filter((sentence) => classifySentence(sentence) === null)
    .join(' ');
  const action = requestAsAction(request);
  if (action !== null) return { text: `${action}; ${files}`, reported: true };
  const base = `${files.charAt(0).toUpperCase()}${files.slice(1)} (${plural(group.edits, 'edit')})`;
  if (group.reason === null) return { text: base, reported: false };
  return {
    text: `${base} for: "${truncateChars(oneLine(group.reason.text), MAX_REASON_CHARS)}"`,
    reported: false,
  };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
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
