import { redactSecrets } from '../redaction';
import { distillExtractively } from './extractive/extractive-distiller';
import type { FactLine } from './fact-lines';
import { filePathsIn, knownPathsIn } from './files-in-text';
import {
  parseDistillerOutput,
  type ParsedDistillerOutput,
  type ParsedSegment,
} from './output-parser';
import { earliest } from './time';
import { distillationHeader, type DistillationWindow } from './triggers';
import { buildTranscript, type TranscriptEntry } from './transcript';
import type { Distillation, DistilledFact, DistilledSegment } from './types';

export interface LlmDistillationResult {
  distillation: Distillation;
  parse: ParsedDistillerOutput;
  /** The output held no fact and no narrative, so the extractive distiller stood in. */
  fellBack: boolean;
}

/**
 * A distillation from an LLM's raw output for a window. Times the window does not contain are
 * removed (never invented); each fact is tied to the events of its minute (else to the window's
 * user prompts) and to the window's files it names; texts are redacted once more. Output with
 * nothing usable (empty, unparseable, or no facts) falls back to distillExtractively, so a bad
 * model answer never loses the window.
 */
export function distillationFromLlmOutput(
  raw: string | null | undefined,
  window: DistillationWindow,
): LlmDistillationResult {
  const transcript = buildTranscript(window.prompts, window.toolCalls);
  const knownTimes = new Set(transcript.map((entry) => entry.time));
  const parse = parseDistillerOutput(raw, { knownTimes });
  const usable = parse.segments.some((s) => s.facts.length > 0 || s.narrative !== null);
  if (!usable) return { distillation: distillExtractively(window), parse, fellBack: true };
  const context = provenanceContext(transcript);
  const episodeId = window.segments.length === 1 ? window.segments[0].episodeId : null;
  const segments = parse.segments.map((segment) => toSegment(segment, episodeId, context));
  return {
    distillation: {
      ...distillationHeader(window, 'llm'),
      segments,
      currentTask: redacted(parse.currentTask),
      suggestedResponse: redacted(parse.suggestedResponse),
      sourceEventIds: transcript.map((entry) => entry.eventId),
    },
    parse,
    fellBack: false,
  };
}

interface ProvenanceContext {
  byTime: Map<string, TranscriptEntry[]>;
  userPromptIds: string[];
  knownPaths: string[];
}

function provenanceContext(transcript: readonly TranscriptEntry[]): ProvenanceContext {
  const byTime = new Map<string, TranscriptEntry[]>();
  for (const entry of transcript) {
    byTime.set(entry.time, [...(byTime.get(entry.time) ?? []), entry]);
  }
  return {
    byTime,
    userPromptIds: transcript
      .filter((entry) => entry.kind === 'prompt' && entry.source === 'user')
      .map((entry) => entry.eventId),
    knownPaths: [
      ...new Set(transcript.flatMap((entry) => (entry.kind === 'tool' ? entry.filePaths : []))),
    ],
  };
}

function toSegment(
  segment: ParsedSegment,
  episodeId: string | null,
  context: ProvenanceContext,
): DistilledSegment {
  const facts = segment.facts.map((fact) => toFact(fact, context));
  const eventIds = [...new Set(facts.flatMap((fact) => fact.sourceEventIds))];
  return {
    episodeId,
    title: redacted(segment.title),
    narrative: redacted(segment.narrative),
    facts,
    sourceEventIds: eventIds.length > 0 ? eventIds : [...context.userPromptIds],
  };
}

function toFact(fact: FactLine, context: ProvenanceContext): DistilledFact {
  const events = fact.time === null ? [] : (context.byTime.get(fact.time) ?? []);
  const text = redactSecrets(fact.text).text;
  const named = knownPathsIn(text, context.knownPaths);
  const otherPaths = filePathsIn(text).filter(
    (path) => path.includes('/') && !named.includes(path),
  );
  return {
    priority: fact.priority,
    time: events.length > 0 ? fact.time : null,
    at: events.length > 0 ? earliest(events.map((e) => e.timestamp)) : null,
    text,
    kind: null,
    sourceEventIds: events.length > 0 ? events.map((e) => e.eventId) : [...context.userPromptIds],
    relatedFiles: [...named, ...otherPaths],
  };
}

function redacted(text: string | null): string | null {
  return text === null ? null : redactSecrets(text).text;
}
