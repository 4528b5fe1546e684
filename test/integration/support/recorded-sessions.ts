import type { Typed } from '@engram/contracts';
import { v5 as uuidv5 } from 'uuid';

const NAMESPACE = '0b7c3f52-7a0e-5d7e-8f51-3b0d1e6c2a90';

/** Tasks a developer hands an agent: each a few prompts sharing vocabulary, then terse replies. */
const TASKS: string[][] = [
  [
    'fix the token refresh race in src/auth/refresh.ts when logout happens during refresh',
    'the refresh token race still happens when two tabs refresh at the same time',
    'yes',
    'add a regression test for the refresh token race with two concurrent refresh calls',
  ],
  [
    'upgrade the elasticsearch client to 8.19 and regenerate the index templates',
    'the index templates for engram-memories need the dense_vector dims from config',
    'ok push',
  ],
  [
    'why does the kafka consumer stall after a rebalance in the segmenter service',
    'the consumer stall looks like the rebalance never resolves the offsets of the last batch',
    '5,6',
    'make the consumer resolve offsets of control records after a rebalance',
  ],
  [
    'write the architecture notes for the neo4j co-access graph and its constraints',
    'add the co-access weight formula to the neo4j architecture notes',
    'looks good',
  ],
  [
    'profile the recall latency of the retrieval service under 50 concurrent queries',
    'the recall latency p99 is dominated by the knn search, try a smaller num_candidates',
  ],
];

export interface RecordedStream {
  prompts: Typed<'PromptSubmitted'>[];
  toolCalls: Typed<'ToolCallObserved'>[];
  lifecycle: Typed<'SessionEnded'>[];
}

/**
 * A deterministic multi-session recording: each session works through a few tasks (prompts,
 * terse replies, agent turns, tool calls with reads, edits and a failing-then-passing test), most
 * sessions end with SessionEnded, some are left open.
 */
export function recordedStream(
  sessions: number,
  start = Date.UTC(2026, 10, 20, 9),
): RecordedStream {
  const stream: RecordedStream = { prompts: [], toolCalls: [], lifecycle: [] };
  for (let s = 0; s < sessions; s += 1) {
    const sessionId = `recorded-session-${s}`;
    const envelope = (kind: string, n: number, at: number) => ({
      eventId: uuidv5(`${sessionId}:${kind}:${n}`, NAMESPACE),
      tenantId: 'acme',
      projectId: `acme/repo-${s % 3}`,
      sessionId,
      agentId: 'claude-code',
      userId: `dev-${s % 4}`,
      timestamp: at,
      schemaVersion: 1,
    });
    let at = start + s * 7 * 60_000;
    let promptId = 0;
    for (let t = 0; t < 3; t += 1) {
      const task = TASKS[(s + t) % TASKS.length];
      for (const [i, text] of task.entries()) {
        promptId += 1;
        at += (i === 0 ? 90 : 40) * 1000;
        stream.prompts.push({
          type: 'PromptSubmitted',
          ...envelope('prompt', promptId, at),
          promptId,
          source: 'user',
          channel: 'cli',
          channelKind: 'explicit',
          explicitThreadId: sessionId,
          text,
          methodology: null,
          methodologyPhase: null,
          workUnitRef: null,
          parentEpisodeId: null,
        });
        const userPromptId = promptId;
        for (let step = 0; step < 2; step += 1) {
          at += 5_000;
          const failing = step === 0 && i === task.length - 1;
          stream.toolCalls.push({
            type: 'ToolCallObserved',
            ...envelope('tool', userPromptId * 10 + step, at),
            promptId: userPromptId,
            stepIndex: step,
            toolName: step === 0 ? 'Read' : failing ? 'Bash' : 'Edit',
            filePaths: [`src/module-${(s + t) % 4}/file-${i}.ts`],
            command: failing ? 'npm test' : null,
            argsJson: '{}',
            outcome: failing ? 'error' : 'ok',
            errorMessage: failing ? 'Expected 2 received 1' : null,
            durationMs: 120,
            tokensUsed: null,
            mcp: false,
          });
        }
        promptId += 1;
        at += 10_000;
        stream.prompts.push({
          type: 'PromptSubmitted',
          ...envelope('prompt', promptId, at),
          promptId,
          source: 'agent',
          channel: 'cli',
          channelKind: 'explicit',
          explicitThreadId: sessionId,
          text: `Done: ${text.slice(0, 40)}`,
          methodology: null,
          methodologyPhase: null,
          workUnitRef: null,
          parentEpisodeId: null,
        });
      }
    }
    if (s % 5 !== 4) {
      stream.lifecycle.push({
        type: 'SessionEnded',
        ...envelope('end', 0, at + 60_000),
        userMessageCount: promptId,
        durationS: Math.round((at - start) / 1000),
        reason: 'exit',
      });
    }
  }
  return stream;
}
