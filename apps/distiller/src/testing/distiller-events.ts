// Test support: recorded coding-agent sessions as the contract events the distiller consumes
// (prompts, tool calls, lifecycle, and the segmenter's episode boundaries), with deterministic
// ids and times.
import type { EpisodeBoundaryEvent, EventEnvelope, LifecycleEvent, Typed } from '@engram/contracts';
import { uuidV5 } from '@engram/core';

export interface Scope {
  tenantId: string;
  projectId: string;
}

export interface ToolSpec {
  files?: string[];
  command?: string;
  error?: string;
  /** Seconds after the previous event (default 20). */
  after?: number;
}

type Boundary = EpisodeBoundaryEvent;

/** One session as it would reach Kafka. */
export class RecordedSession {
  readonly prompts: Typed<'PromptSubmitted'>[] = [];
  readonly toolCalls: Typed<'ToolCallObserved'>[] = [];
  readonly lifecycle: LifecycleEvent[] = [];
  readonly boundaries: Boundary[] = [];
  private clock: number;
  private promptId = 0;
  private step = 0;
  private serial = 0;
  private episodeStart: { promptId: number; at: number } | null = null;

  constructor(
    readonly sessionId: string,
    start: number,
    readonly scope: Scope,
  ) {
    this.clock = start;
    this.lifecycle.push({
      type: 'SessionStarted',
      ...this.envelope('started'),
      agentKind: 'claude-code',
      gitBranch: 'main',
      gitHeadSha: null,
      methodology: null,
      workUnitRef: null,
    });
  }

  /** A user prompt `after` seconds after the previous event; opens an episode if none is open. */
  user(text: string, after = 60): this {
    this.prompt('user', text, after);
    return this;
  }

  agent(text: string, after = 20): this {
    this.prompt('agent', text, after);
    return this;
  }

  tool(toolName: string, spec: ToolSpec = {}): this {
    this.clock += (spec.after ?? 20) * 1000;
    this.step += 1;
    this.toolCalls.push({
      type: 'ToolCallObserved',
      ...this.envelope('tool'),
      promptId: this.lastUserPromptId(),
      stepIndex: this.step,
      toolName,
      filePaths: spec.files ?? [],
      command: spec.command ?? null,
      argsJson: JSON.stringify({ files: spec.files ?? [], command: spec.command ?? null }),
      outcome: spec.error === undefined ? 'ok' : 'error',
      errorMessage: spec.error ?? null,
      durationMs: 1_500,
      tokensUsed: null,
      mcp: false,
    });
    return this;
  }

  /** Closes the open episode (as the segmenter would), `intent_shift` unless told otherwise. */
  closeEpisode(reason: 'intent_shift' | 'session_end' | 'thread_inactivity' = 'intent_shift') {
    const start = this.episodeStart;
    if (start === null) return this;
    this.clock += 1000;
    this.boundaries.push({
      type: 'EpisodeClosed',
      ...this.envelope('closed'),
      episodeId: this.episodeId(start.promptId),
      threadId: `${this.sessionId}-thread`,
      firstPromptId: start.promptId,
      lastPromptId: this.promptId,
      intentKeywords: [],
      reason,
      similarity: null,
      threshold: null,
      userPromptCount: this.prompts.filter((p) => p.promptId >= start.promptId).length,
    });
    this.episodeStart = null;
    return this;
  }

  validation(passed: boolean, after = 30): this {
    this.clock += after * 1000;
    const common = { ...this.envelope('validation'), workUnitRef: null, summary: null, issues: [] };
    this.lifecycle.push(
      passed ? { type: 'ValidationPassed', ...common } : { type: 'ValidationFailed', ...common },
    );
    return this;
  }

  compaction(firstPromptId: number | null = null, lastPromptId: number | null = null): this {
    this.clock += 5000;
    this.lifecycle.push({
      type: 'CompactionPending',
      ...this.envelope('compaction'),
      firstPromptId,
      lastPromptId,
      tokenCount: 150_000,
    });
    return this;
  }

  /** SessionEnded; the segmenter closes the open episode after it (`session_end`). */
  end(): this {
    this.clock += 5000;
    const userMessageCount = this.prompts.filter((p) => p.source === 'user').length;
    this.lifecycle.push({
      type: 'SessionEnded',
      ...this.envelope('ended'),
      userMessageCount,
      durationS: Math.round((this.clock - this.prompts[0].timestamp) / 1000),
      reason: 'exit',
    });
    this.closeEpisode('session_end');
    return this;
  }

  episodeId(firstPromptId: number): string {
    return uuidV5(`episode:${this.sessionId}:${firstPromptId}`);
  }

  /** Every event id of the session's prompts and tool calls. */
  get sourceEventIds(): Set<string> {
    return new Set([...this.prompts, ...this.toolCalls].map((e) => e.eventId));
  }

  /** The times of the session's events: a memory may carry no other. */
  get eventTimes(): Set<number> {
    return new Set([...this.prompts, ...this.toolCalls].map((e) => e.timestamp));
  }

  private prompt(source: 'user' | 'agent', text: string, after: number): void {
    this.clock += after * 1000;
    this.promptId += 1;
    this.prompts.push({
      type: 'PromptSubmitted',
      ...this.envelope('prompt'),
      promptId: this.promptId,
      source,
      channel: 'cli',
      channelKind: 'explicit',
      explicitThreadId: null,
      text,
      methodology: null,
      methodologyPhase: null,
      workUnitRef: null,
      parentEpisodeId: null,
    });
    if (source === 'user' && this.episodeStart === null) {
      this.episodeStart = { promptId: this.promptId, at: this.clock };
      this.boundaries.push({
        type: 'EpisodeOpened',
        ...this.envelope('opened'),
        episodeId: this.episodeId(this.promptId),
        threadId: `${this.sessionId}-thread`,
        firstPromptId: this.promptId,
        lastPromptId: this.promptId,
        intentKeywords: [],
        reason: null,
        similarity: null,
        threshold: null,
        parentEpisodeId: null,
      });
    }
  }

  private lastUserPromptId(): number {
    const users = this.prompts.filter((p) => p.source === 'user');
    return users.length === 0 ? 0 : users[users.length - 1].promptId;
  }

  private envelope(kind: string): EventEnvelope {
    this.serial += 1;
    return {
      eventId: uuidV5(`${this.sessionId}:${kind}:${this.serial}`),
      tenantId: this.scope.tenantId,
      projectId: this.scope.projectId,
      sessionId: this.sessionId,
      agentId: 'claude-code',
      userId: 'tim',
      timestamp: this.clock,
      schemaVersion: 1,
    };
  }
}

/**
 * A debugging session in three episodes: a failing test fixed after the user's correction, a
 * "don't use X, use Y instead" correction with a command that worked after failing and a stated
 * rule, then a decision with its rationale. Seven user messages, so its end is distilled too.
 */
export function debuggingSession(sessionId: string, start: number, scope: Scope): RecordedSession {
  return new RecordedSession(sessionId, start, scope)
    .user(
      'The refresh token test in src/auth/refresh.spec.ts started failing after the upgrade, can you fix it',
    )
    .tool('Read', { files: ['src/auth/refresh.spec.ts'] })
    .tool('Read', { files: ['src/auth/refresh.ts'] })
    .tool('Bash', {
      command: 'npm test -- src/auth/refresh.spec.ts',
      error: 'AssertionError: expected 401 to be 200\n    at refresh.spec.ts:42',
    })
    .tool('Edit', { files: ['src/auth/cache.ts'] })
    .user("No, don't touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts.")
    .tool('Read', { files: ['src/auth/clock.ts'] })
    .tool('Edit', { files: ['src/auth/clock.ts'] })
    .tool('Bash', { command: 'npm test -- src/auth/refresh.spec.ts' })
    .closeEpisode()
    .user('Now add retries with backoff to the token refresh in src/auth/refresh.ts')
    .tool('Edit', { files: ['src/auth/refresh.ts'] })
    .user(
      "Don't use axios-retry, use our own retryWithBackoff helper from src/util/retry.ts instead.",
    )
    .tool('Read', { files: ['src/util/retry.ts'] })
    .tool('Edit', { files: ['src/auth/refresh.ts'] })
    .tool('Bash', {
      command: 'npm run test:unit',
      error: "Error: Cannot find module 'vitest/config'",
    })
    .tool('Bash', { command: 'npx vitest run src/auth' })
    .user('Always run the auth tests with --no-file-parallelism from now on.')
    .tool('Bash', { command: 'npx vitest run src/auth --no-file-parallelism' })
    .closeEpisode()
    .user(
      "Let's use fake timers instead of real sleeps in these tests because the CI machines are slow.",
    )
    .tool('Edit', { files: ['src/auth/refresh.spec.ts'] })
    .tool('Bash', { command: 'npx vitest run src/auth --no-file-parallelism' })
    .validation(true)
    .user('ok, commit it')
    .tool('Bash', { command: 'git commit -am "fix refresh clock skew"' })
    .end();
}

/** A session compacted in the middle (a distillation) and ended later (another one). */
export function compactedSession(sessionId: string, start: number, scope: Scope): RecordedSession {
  const session = new RecordedSession(sessionId, start, scope)
    .user('Migrate the users table to add a last_login_at column in migrations/')
    .tool('Read', { files: ['src/db/schema.ts'] })
    .tool('Edit', { files: ['migrations/0042_last_login.sql'] })
    .tool('Bash', {
      command: 'npm run migrate',
      error: 'relation "users" does not exist',
    })
    .user('Never run migrations against the shared dev database, use the local docker one.')
    .tool('Bash', { command: 'docker compose up -d postgres' })
    .tool('Bash', { command: 'npm run migrate' })
    .user('Now backfill last_login_at from the sessions table')
    .tool('Edit', { files: ['migrations/0043_backfill_last_login.sql'] });
  session.compaction();
  return session
    .user('We decided to keep the backfill in SQL rather than a script because it runs once.')
    .tool('Bash', { command: 'npm run migrate' })
    .user('Add an index on last_login_at too')
    .tool('Edit', { files: ['migrations/0044_last_login_index.sql'] })
    .user('thanks, that is all')
    .end();
}

/** A short session: its episode is distilled, its end is not (fewer than 5 user messages). */
export function shortSession(sessionId: string, start: number, scope: Scope): RecordedSession {
  return new RecordedSession(sessionId, start, scope)
    .user('Rename the logger helper in src/util/log.ts to createLogger')
    .tool('Edit', { files: ['src/util/log.ts'] })
    .tool('Bash', { command: 'npx tsc --noEmit', error: 'src/api/server.ts(3,10): error TS2305' })
    .tool('Edit', { files: ['src/api/server.ts'] })
    .tool('Bash', { command: 'npx tsc --noEmit' })
    .end();
}
