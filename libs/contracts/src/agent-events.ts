import type { EventEnvelope, WorkUnitRef } from './envelope';

export const PROMPT_SOURCES = ['user', 'agent', 'system'] as const;
export type PromptSource = (typeof PROMPT_SOURCES)[number];

export const CHANNEL_KINDS = ['explicit', 'implicit'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export const TOOL_OUTCOMES = ['ok', 'error'] as const;
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

/** `agent.prompts.v1`. */
export interface PromptSubmitted extends EventEnvelope {
  /** Increasing within a session. */
  promptId: number;
  source: PromptSource;
  /** cli, ide, web, slack, sms, email, api, … */
  channel: string;
  channelKind: ChannelKind;
  explicitThreadId: string | null;
  text: string;
  methodology: string | null;
  methodologyPhase: string | null;
  workUnitRef: WorkUnitRef | null;
  /** An explicit parent episode named by the client (SPEC §4.3). */
  parentEpisodeId: string | null;
}

/** `agent.tool-calls.v1`. */
export interface ToolCallObserved extends EventEnvelope {
  /** The user prompt this call serves. */
  promptId: number;
  stepIndex: number;
  toolName: string;
  filePaths: string[];
  command: string | null;
  /** Redacted tool arguments, JSON. */
  argsJson: string;
  outcome: ToolOutcome;
  errorMessage: string | null;
  durationMs: number;
  tokensUsed: number | null;
  mcp: boolean;
  /**
   * Steps of the plan this call wrote, when it wrote the agent's plan (a todo list: Claude Code
   * TodoWrite, Codex update_plan); feeds task_calibration. Optional in TypeScript because it was
   * added after v1 (Avro default null): producers that predate it omit it, records written before
   * it decode with null.
   */
  plannedSteps?: number | null;
  /**
   * MCP tools only: the text of the tool's result, redacted and capped (`resultSummary` cap,
   * text-caps.ts); feeds e2e_observation. Optional for the same reason as `plannedSteps`.
   */
  resultSummary?: string | null;
}
