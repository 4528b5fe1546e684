import type { MemoryType } from '@engram/contracts';
import { normaliseContent } from '../../distillation/memories';
import type { MemoryCandidate } from '../candidates';
import { groupBy, sortedUnique } from '../candidates';
import type { InferenceInput } from './inference-input';
import { modulesOf } from './rule-helpers';

/**
 * The agent's remember_this notes (RememberRequested) of validated work → memories of their
 * stated type (source `agent_explicit`). Notes without a type get one from their wording; the
 * same text (as the distiller normalises content) is one memory.
 */
export function rememberRequestRule(input: InferenceInput): MemoryCandidate[] {
  // The distiller's content normalisation: the same note reaching memory through the
  // distiller (from the transcript) and here gets the same memory id.
  const groups = groupBy(input.notes, (note) => normaliseContent(note.text));
  const candidates: MemoryCandidate[] = [];
  for (const [naturalKey, notes] of groups) {
    if (naturalKey === '') continue;
    const latest = notes.reduce((a, b) => (b.at > a.at ? b : a));
    const memoryType = latest.memoryType ?? classifyNote(latest.text);
    const relatedFiles = sortedUnique(notes.flatMap((n) => n.relatedFiles));
    candidates.push({
      key: `${memoryType}:${naturalKey}`,
      memoryType,
      naturalKey,
      rule: 'remember_request',
      signalType: 'remember',
      source: 'agent_explicit',
      scope: relatedFiles.length > 0 ? 'module' : 'global',
      frequency: notes.length,
      lastObservedAt: latest.at,
      relatedFiles,
      relatedModules: modulesOf(relatedFiles, input.settings.moduleDepth),
      evidence: {
        sessionIds: sortedUnique(notes.map((n) => n.sessionId)),
        eventIds: sortedUnique(notes.map((n) => n.eventId)),
        latest: { sessionId: latest.sessionId, promptId: null, at: latest.at },
      },
      facts: { kind: 'remember_request', text: latest.text.trim() },
    });
  }
  return candidates;
}

const NOTE_TYPES: ReadonlyArray<[RegExp, MemoryType]> = [
  [/\b(error|exception|fails?|failing|crash(es)?)\b/i, 'error_pattern'],
  [/\b(gotcha|careful|beware|watch out|never|don't|do not|must not|trap)\b/i, 'gotcha'],
  [/\b(decided|decision|chose|chosen|we use|instead of)\b/i, 'decision'],
  [/\b(prefer|preference|always use|style)\b/i, 'preference'],
  [/\b(requirement|required|must)\b/i, 'requirement'],
];

/** A type for an untyped note from its wording; `pattern` when nothing matches. */
export function classifyNote(text: string): MemoryType {
  for (const [pattern, type] of NOTE_TYPES) if (pattern.test(text)) return type;
  return 'pattern';
}
