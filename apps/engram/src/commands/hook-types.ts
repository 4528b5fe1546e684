import type { HookProject, PendingReviews } from '@engram/core';
import type { HookSessionStore } from '../hook-session-store';
import type { HookSpool, PublishEvents } from '../hook-spool';

// The pieces of one `engram hook` run (hook-run.ts): where events go, where memory comes from,
// what a run is given and what it reports.

/** Where events go: the embedded log or Kafka. */
export interface HookPublisher {
  publish: PublishEvents;
  close(): Promise<void>;
}

export interface HookScope {
  tenantId: string;
  projectId: string;
  sessionId: string;
  /** The working tree (absolute), when known: injected memories are checked against it. */
  projectRoot?: string;
  /**
   * Told when that check left out something whose every related file is gone (the ids left
   * out): the hook then sends the service a fresh FileManifest (files-gone-manifest.ts).
   */
  onFilesGone?: (ids: readonly string[]) => void;
}

/**
 * Memory back into the session: BuildContext and InjectForFile of the Recall API
 * (schemas/proto/engram/recall/v1/recall.proto), embedded mode answering in process on the local
 * retrieval store (embeddedHookMemory), distributed mode over gRPC (grpcHookMemory). Each
 * returns ready-to-print text, or '' for nothing.
 */
export interface HookMemory {
  buildContext(scope: HookScope, query: string | null): Promise<string>;
  injectForFile(scope: HookScope, filePath: string, toolName: string): Promise<string>;
  /**
   * How many MEMORY.md proposals and inferred memories of the project await review (`engram
   * review` lists them), asked at SessionStart only; absent: none are mentioned.
   */
  pendingReviews?(scope: HookScope): Promise<PendingReviews>;
  close(): Promise<void>;
}

export interface HookRun {
  /** The hook's stdin. */
  input: string;
  /** Publishing (or spooling) is over by then. */
  budgetMs: number;
  /**
   * Memory context is given up by then (from the start; at least budgetMs). Recall runs after
   * publishing, so this only ever costs context, never events.
   */
  contextBudgetMs?: number;
  spool: HookSpool;
  /**
   * Where events go when `spool` cannot take them (the data dir is unwritable, a file, or the
   * disk is full), in order; drained like `spool` once the log can be reached.
   */
  fallbackSpools?: readonly HookSpool[];
  sessions: HookSessionStore;
  /** Tenant, project, root and git facts for the payload's cwd. */
  project(cwd: string | undefined): HookProject;
  openPublisher(): Promise<HookPublisher>;
  /**
   * Absent, or resolving to null: no context is printed. `deadline` (epoch ms) is when context
   * is given up: a remote source passes it on as its call deadline.
   */
  openMemory?: (deadline: number) => Promise<HookMemory | null>;
  /**
   * `git <args>` in `directory`, its stdout (default: the git executable, no shell, killed at
   * `timeoutMs`). Only called after a Bash call that made a commit.
   */
  git?: (
    directory: string,
    args: readonly string[],
    timeoutMs: number,
    maxBytes?: number,
  ) => Promise<string>;
  now?: () => number;
  /**
   * Called once the events are in the log or the spool (or could not be spooled anywhere),
   * before any recall; not called when the input could not be mapped (nothing was delivered).
   */
  onDelivered?: (outcome: HookOutcome) => void;
}

export interface HookOutcome {
  /** What to print on stdout for Claude Code (its JSON output), or null for nothing. */
  stdout: string | null;
  /** Messages for stderr (Claude Code shows them in verbose mode only, with exit code 0). */
  messages: string[];
  hookEventName: string | null;
  published: number;
  drained: number;
  spooled: number;
  timedOut: boolean;
}
