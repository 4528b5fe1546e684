/**
 * File-prediction data (issue #23): recorded agent work as sessions of tool calls on files, in
 * the shape Engram's observer consumes (SPEC §3 ToolCallObserved: toolName, filePaths relative to
 * the project root, stepIndex, promptId, outcome).
 */
import type { Typed } from '@engram/contracts';

export interface BenchCall {
  /** The session's step (0, 1, …): the observer's co-access window counts these. */
  step: number;
  promptId: number;
  /** As the agent named it (`open`, `create`, `edit`, `Read`, `Edit`…): the observer classifies. */
  toolName: string;
  /** Project-relative paths. */
  filePaths: string[];
  /** Read or edit of `filePaths`: the files a session "touches" (what is predicted). */
  touches: boolean;
  outcome: 'ok' | 'error';
  at: number;
}

export interface BenchSession {
  /** `swe-agent`, `claude-code`, `synthetic`. */
  dataset: string;
  projectId: string;
  sessionId: string;
  /** Where the session came from (a file name), for notes. */
  source: string;
  /** False for sessions replayed as an evaluator would (noise) but never queried. */
  queried: boolean;
  calls: BenchCall[];
}

export const BENCH_TENANT = 'bench';

/** The ToolCallObserved events of a session, as `engram replay` would publish them. */
export function toolCallEvents(session: BenchSession): Typed<'ToolCallObserved'>[] {
  return session.calls.map((call) => ({
    type: 'ToolCallObserved' as const,
    eventId: `${session.sessionId}:${call.step}`,
    tenantId: BENCH_TENANT,
    projectId: session.projectId,
    sessionId: session.sessionId,
    agentId: session.dataset,
    userId: null,
    timestamp: call.at,
    schemaVersion: 1,
    promptId: call.promptId,
    stepIndex: call.step,
    toolName: call.toolName,
    filePaths: call.filePaths,
    command: null,
    argsJson: '{}',
    outcome: call.outcome,
    errorMessage: call.outcome === 'error' ? 'failed' : null,
    durationMs: 0,
    tokensUsed: null,
    mcp: false,
  }));
}

/** The distinct files a session reads or edits, in the order of their first touch. */
export function touchedFiles(session: BenchSession): string[] {
  const seen = new Set<string>();
  for (const call of session.calls) {
    if (call.touches) for (const file of call.filePaths) seen.add(file);
  }
  return [...seen];
}
