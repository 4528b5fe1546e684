import type { EpochMillis, PromptSource, ToolOutcome } from '@engram/contracts';
import { redactSecrets } from '../redaction';
import { classifyTool, type ToolActivity } from '../segmentation/tool-activity';
import { clockTime } from './time';
import { truncateChars } from './tokens';
import type { DistillPrompt, DistillToolCall } from './types';

/**
 * The window as one ordered transcript, the form both distillers read. Every text is passed
 * through redactSecrets again (idempotent; events should arrive redacted, SPEC §11, but a prompt
 * sent to an LLM must never carry a secret that slipped through).
 */
export type TranscriptEntry = PromptEntry | ToolEntry;

interface EntryBase {
  eventId: string;
  timestamp: EpochMillis;
  /** `HH:MM` (UTC) of `timestamp`. */
  time: string;
  promptId: number;
}

export interface PromptEntry extends EntryBase {
  kind: 'prompt';
  source: PromptSource;
  text: string;
}

export interface ToolEntry extends EntryBase {
  kind: 'tool';
  stepIndex: number;
  toolName: string;
  activity: ToolActivity;
  filePaths: string[];
  command: string | null;
  outcome: ToolOutcome;
  errorMessage: string | null;
}

/** Prompts and tool calls merged: by promptId, a prompt before the calls serving it, by step. */
export function buildTranscript(
  prompts: readonly DistillPrompt[],
  toolCalls: readonly DistillToolCall[],
): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [
    ...prompts.map((prompt): PromptEntry => promptEntry(prompt)),
    ...toolCalls.map((call): ToolEntry => toolEntry(call)),
  ];
  return entries.sort(compareEntries);
}

function promptEntry(prompt: DistillPrompt): PromptEntry {
  return {
    kind: 'prompt',
    eventId: prompt.eventId,
    timestamp: prompt.timestamp,
    time: clockTime(prompt.timestamp),
    promptId: prompt.promptId,
    source: prompt.source,
    text: redactSecrets(prompt.text).text.trim(),
  };
}

function toolEntry(call: DistillToolCall): ToolEntry {
  return {
    kind: 'tool',
    eventId: call.eventId,
    timestamp: call.timestamp,
    time: clockTime(call.timestamp),
    promptId: call.promptId,
    stepIndex: call.stepIndex,
    toolName: call.toolName,
    activity: classifyTool(call),
    filePaths: [...new Set(call.filePaths.map((p) => p.trim()).filter((p) => p !== ''))],
    command: call.command === null ? null : redactSecrets(call.command).text.trim() || null,
    outcome: call.outcome,
    errorMessage:
      call.errorMessage === null ? null : redactSecrets(call.errorMessage).text.trim() || null,
  };
}

function compareEntries(a: TranscriptEntry, b: TranscriptEntry): number {
  if (a.promptId !== b.promptId) return a.promptId - b.promptId;
  const stepA = a.kind === 'prompt' ? -1 : a.stepIndex;
  const stepB = b.kind === 'prompt' ? -1 : b.stepIndex;
  return stepA - stepB || a.timestamp - b.timestamp || compareText(a.eventId, b.eventId);
}

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface RenderOptions {
  /** Characters kept of one prompt (default 1,500). */
  maxPromptChars: number;
  /** Characters kept of one error message (default 300). */
  maxErrorChars: number;
  /** Characters kept of one command (default 200). */
  maxCommandChars: number;
}

export const DEFAULT_RENDER_OPTIONS: Readonly<RenderOptions> = Object.freeze({
  maxPromptChars: 1500,
  maxErrorChars: 300,
  maxCommandChars: 200,
});

const SPEAKERS: Readonly<Record<PromptSource, string>> = {
  user: 'USER',
  agent: 'AGENT',
  system: 'SYSTEM',
};

/**
 * One transcript line, prefixed `[HH:MM]` as seed 001's serialiser does, so the model can anchor
 * facts to times that exist:
 * `[09:15] USER: fix the flaky auth test` · `[09:16] TOOL Edit src/a.ts → ok` ·
 * `[09:17] TOOL Bash \`npm test\` → error: AssertionError …`.
 */
export function renderEntry(
  entry: TranscriptEntry,
  options: RenderOptions = DEFAULT_RENDER_OPTIONS,
): string {
  if (entry.kind === 'prompt') {
    const text = truncateChars(entry.text, options.maxPromptChars).replace(/\r?\n/g, '\n    ');
    return `[${entry.time}] ${SPEAKERS[entry.source]}: ${text}`;
  }
  const parts = [`[${entry.time}] TOOL ${entry.toolName}`];
  if (entry.command !== null) {
    parts.push(`\`${truncateChars(oneLine(entry.command), options.maxCommandChars)}\``);
  }
  if (entry.filePaths.length > 0) parts.push(entry.filePaths.join(', '));
  const result =
    entry.outcome === 'ok'
      ? '→ ok'
      : `→ error${entry.errorMessage === null ? '' : `: ${truncateChars(oneLine(entry.errorMessage), options.maxErrorChars)}`}`;
  return `${parts.join(' ')} ${result}`;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
