// Test support only (not exported from the distillation index): builds a recorded session of
// prompts and tool calls with deterministic ids and times, and the triggers that close it.
import type {
  CompactionPending,
  EpisodeClosed,
  EventEnvelope,
  SessionEnded,
} from '@engram/contracts';
import type { DistillationTrigger } from '../triggers';
import type { DistillPrompt, DistillToolCall, DistillValidation } from '../types';

export interface ToolSpec {
  files?: string[];
  command?: string;
  error?: string;
  /** Seconds after the previous event (default 20). */
  after?: number;
}

export class SessionBuilder {
  readonly prompts: DistillPrompt[] = [];
  readonly toolCalls: DistillToolCall[] = [];
  readonly validations: DistillValidation[] = [];
  private clock: number;
  private promptId = 0;
  private step = 0;

  constructor(
    readonly sessionId: string,
    start: number,
    readonly tenantId = 'acme',
    readonly projectId = 'acme/api',
  ) {
    this.clock = start;
  }

  /** A user prompt, `after` seconds after the previous event (default 60). */
  user(text: string, after = 60): number {
    return this.prompt('user', text, after);
  }

  agent(text: string, after = 20): number {
    return this.prompt('agent', text, after);
  }

  tool(toolName: string, spec: ToolSpec = {}): this {
    this.clock += (spec.after ?? 20) * 1000;
    this.step += 1;
    this.toolCalls.push({
      eventId: `${this.sessionId}-t${this.step}`,
      sessionId: this.sessionId,
      promptId: this.lastUserPromptId(),
      stepIndex: this.step,
      toolName,
      filePaths: spec.files ?? [],
      command: spec.command ?? null,
      outcome: spec.error === undefined ? 'ok' : 'error',
      errorMessage: spec.error ?? null,
      timestamp: this.clock,
      agentId: 'claude-code',
      userId: 'tim',
      mcp: false,
    });
    return this;
  }

  validation(passed: boolean, after = 30): this {
    this.clock += after * 1000;
    this.validations.push({
      eventId: `${this.sessionId}-v${this.validations.length + 1}`,
      passed,
      timestamp: this.clock,
    });
    return this;
  }

  get now(): number {
    return this.clock;
  }

  events(): {
    prompts: DistillPrompt[];
    toolCalls: DistillToolCall[];
    validations: DistillValidation[];
  } {
    return {
      prompts: [...this.prompts],
      toolCalls: [...this.toolCalls],
      validations: [...this.validations],
    };
  }

  episodeClosed(
    firstPromptId = 1,
    lastPromptId = this.promptId,
    episodeId = `${this.sessionId}-e${firstPromptId}`,
  ): DistillationTrigger {
    const event: EpisodeClosed = {
      ...this.envelope('closed'),
      episodeId,
      threadId: `${this.sessionId}-thread`,
      firstPromptId,
      lastPromptId,
      intentKeywords: [],
      reason: 'session_end',
      similarity: null,
      threshold: null,
      userPromptCount: this.prompts.filter((p) => p.source === 'user').length,
    };
    return { kind: 'EpisodeClosed', event };
  }

  sessionEnded(
    userMessageCount = this.prompts.filter((p) => p.source === 'user').length,
  ): DistillationTrigger {
    const event: SessionEnded = {
      ...this.envelope('ended'),
      userMessageCount,
      durationS: 3600,
      reason: 'exit',
    };
    return { kind: 'SessionEnded', event };
  }

  compactionPending(
    firstPromptId: number | null = null,
    lastPromptId: number | null = null,
  ): DistillationTrigger {
    const event: CompactionPending = {
      ...this.envelope('compaction'),
      firstPromptId,
      lastPromptId,
      tokenCount: 150_000,
    };
    return { kind: 'CompactionPending', event };
  }

  private prompt(source: 'user' | 'agent', text: string, after: number): number {
    this.clock += after * 1000;
    this.promptId += 1;
    this.prompts.push({
      eventId: `${this.sessionId}-p${this.promptId}`,
      sessionId: this.sessionId,
      promptId: this.promptId,
      source,
      text,
      timestamp: this.clock,
      agentId: 'claude-code',
      userId: 'tim',
      methodology: null,
      methodologyPhase: null,
    });
    return this.promptId;
  }

  private lastUserPromptId(): number {
    const users = this.prompts.filter((p) => p.source === 'user');
    return users.length === 0 ? 0 : users[users.length - 1].promptId;
  }

  private envelope(kind: string): EventEnvelope {
    this.clock += 5000;
    return {
      eventId: `${this.sessionId}-${kind}`,
      tenantId: this.tenantId,
      projectId: this.projectId,
      sessionId: this.sessionId,
      agentId: 'claude-code',
      userId: 'tim',
      timestamp: this.clock,
      schemaVersion: 1,
    };
  }
}

/** The debugging session of the golden tests: a failing test, a correction, a decision, a rule. */
export function debuggingSession(start = Date.UTC(2026, 1, 16, 9, 0)): SessionBuilder {
  const s = new SessionBuilder('sess-debug', start);
  s.user(
    'The refresh token test in src/auth/refresh.spec.ts started failing after the upgrade, can you fix it',
  );
  s.tool('Read', { files: ['src/auth/refresh.spec.ts'] });
  s.tool('Read', { files: ['src/auth/refresh.ts'] });
  s.tool('Bash', {
    command: 'npm test -- src/auth/refresh.spec.ts',
    error: 'AssertionError: expected 401 to be 200\n    at refresh.spec.ts:42',
  });
  s.tool('Edit', { files: ['src/auth/cache.ts'] });
  s.user("No, don't touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts.");
  s.tool('Read', { files: ['src/auth/clock.ts'] });
  s.tool('Edit', { files: ['src/auth/clock.ts'] });
  s.tool('Bash', { command: 'npm test -- src/auth/refresh.spec.ts' });
  s.user(
    "Let's use fake timers instead of real sleeps in these tests because the CI machines are slow.",
  );
  s.tool('Edit', { files: ['src/auth/refresh.spec.ts'] });
  s.tool('Bash', {
    command: 'npm run test:unit',
    error: "Error: Cannot find module 'vitest/config'",
  });
  s.tool('Bash', { command: 'npx vitest run src/auth' });
  s.user('Always run the auth tests with --no-file-parallelism from now on.');
  s.tool('Bash', { command: 'npx vitest run src/auth --no-file-parallelism' });
  s.user('Should we also cover the logout path?');
  s.user('ok');
  return s;
}
