/**
 * The real Claude Code transcript (`../shared/datasets/claude-code-session/*.jsonl`) as bench
 * sessions, through Engram's own importer mapping (`engram import --claude-transcripts`:
 * ClaudeTranscriptReader → mapTranscriptSession, the events the hook would have published), with
 * the transcript's `cwd` as the project root. The transcript is one Claude Code session of eight
 * typed requests (README update, commit, CommonJS → TypeScript/ESM, commit, folder rename, …);
 * for file prediction each typed request and the tool calls serving it (their `promptId`) is one
 * session, in the transcript's order: what the graph learnt from the earlier requests predicts
 * the files of the next. Slash commands and interruptions are not typed requests (the importer
 * drops them); side-chain (Task) calls belong to the request that started them.
 */
import {
  ClaudeTranscriptReader,
  isFileTouch,
  mapTranscriptSession,
  toolKindOf,
  type HookProject,
} from '@engram/core';
import type { Typed } from '@engram/contracts';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_TENANT, type BenchCall, type BenchSession } from './sessions';

export const CLAUDE_CODE_PROJECT = 'graph-monitor';

export function readClaudeCodeSessions(dir: string): { sessions: BenchSession[]; calls: number } {
  const reader = new ClaudeTranscriptReader();
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()) {
    reader.read(readFileSync(join(dir, name), 'utf8'), name);
  }
  const out: BenchSession[] = [];
  let calls = 0;
  for (const transcript of reader.sessions()) {
    const project: HookProject = {
      tenantId: BENCH_TENANT,
      projectId: CLAUDE_CODE_PROJECT,
      projectRoot: transcript.cwd,
      agentId: 'claude-code',
      userId: null,
      gitBranch: transcript.gitBranch,
      gitHeadSha: null,
    };
    const events = mapTranscriptSession(transcript, project);
    const byPrompt = new Map<number, Typed<'ToolCallObserved'>[]>();
    for (const event of events) {
      if (event.type !== 'ToolCallObserved') continue;
      const call = event;
      calls += 1;
      const list = byPrompt.get(call.promptId) ?? [];
      list.push(call);
      byPrompt.set(call.promptId, list);
    }
    for (const [promptId, list] of [...byPrompt].sort((a, b) => a[0] - b[0])) {
      const benchCalls: BenchCall[] = list.map((call, step) => ({
        step,
        promptId: 1,
        toolName: call.toolName,
        filePaths: call.filePaths,
        touches: call.outcome === 'ok' && isFileTouch(toolKindOf(call.toolName)),
        outcome: call.outcome,
        at: call.timestamp,
      }));
      out.push({
        dataset: 'claude-code',
        projectId: CLAUDE_CODE_PROJECT,
        sessionId: `claude-code:${transcript.sessionId}:request-${promptId}`,
        source: `request ${promptId}`,
        queried: true,
        calls: benchCalls,
      });
    }
  }
  return { sessions: out, calls };
}
