/**
 * Two things a hook payload's tool call can tell beyond its arguments (issue #20):
 * - the agent's plan: a todo-list tool's items are the steps the agent planned, so the call's
 *   `plannedSteps` lets the observer calibrate actual against planned work (task_calibration);
 * - an MCP tool's result: what a browser automation tool saw (page, outcome), as `resultSummary`,
 *   for e2e_observation memories.
 * Both are translations only: which plans and results make memories is decided in the observer.
 */
import { capText, EVENT_TEXT_CAPS } from '../redaction';
import { redactText } from './hook-tool-input';
import { isRecord } from './json-values';

/**
 * The plan tools whose input lists the plan's steps, and under which key: Claude Code's TodoWrite
 * (`todos: [{content, status, activeForm}]`, rewritten whole on every update) and Codex's
 * update_plan (`plan: [{step, status}]`).
 */
const PLAN_TOOLS: Readonly<Record<string, string>> = Object.freeze({
  TodoWrite: 'todos',
  update_plan: 'plan',
});

/** How many steps the plan written by this call holds; null for a call that writes no plan. */
export function plannedStepsOf(toolName: string, toolInput: unknown): number | null {
  const key = PLAN_TOOLS[toolName];
  if (key === undefined || !isRecord(toolInput)) return null;
  const steps = toolInput[key];
  return Array.isArray(steps) && steps.length > 0 ? steps.length : null;
}

/** MCP tools are named `mcp__<server>__<tool>` by Claude Code. */
export function isMcpTool(toolName: string): boolean {
  return toolName.startsWith('mcp__');
}

/**
 * The text of an MCP tool's result, redacted and capped (`resultSummary`, text-caps.ts), or null
 * for other tools and empty results. MCP results are content blocks (`[{type: 'text', text}]`,
 * alone or under `content`) or plain text; images are named, not kept.
 */
export function mcpResultSummary(toolName: string, response: unknown): string | null {
  if (!isMcpTool(toolName)) return null;
  const text = textOf(response, 0).trim();
  return text === '' ? null : capText(text, EVENT_TEXT_CAPS.resultSummary, redactText);
}

/** Nesting followed at most this deep (a response is small JSON, but a producer may not be). */
const MAX_DEPTH = 4;

function textOf(value: unknown, depth: number): string {
  if (typeof value === 'string') return value;
  if (depth > MAX_DEPTH) return '';
  if (Array.isArray(value)) {
    return value
      .map((item) => textOf(item, depth + 1))
      .filter((text) => text !== '')
      .join('\n');
  }
  if (!isRecord(value)) return '';
  if (value.type === 'image') return '[image]';
  if (typeof value.text === 'string') return value.text;
  if (value.content !== undefined) return textOf(value.content, depth + 1);
  if (value.result !== undefined) return textOf(value.result, depth + 1);
  return '';
}
