import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import type { Delivered } from '@engram/core';
import { delivered, episodeRecord, memoryRecord, promptRecord, TENANT } from './records';

// One corpus for the rpcs beside Recall (InjectForFile, BuildContext, GetWorkflowRecipe, episode
// history), indexed into the embedded SQLite store by the unit specs and into Elasticsearch by
// the integration test, so both stores answer the same questions. Times are relative to `now`.

export const OTHER_TENANT = 'globex';
export const AUTH_FILE = 'src/auth/refresh.ts';
/** The session BuildContext is asked about: an implicit channel, in its second thread. */
export const CURRENT_SESSION = 's-now';

const DAY = 86_400_000;

/** The corpus memories flagged needsReview and unconfirmed, newest first (ListForReview). */
export const REVIEW_QUEUE = ['review-1', 'review-2', 'review-3'] as const;

export interface RpcCorpus {
  memories: Memory[];
  episodes: Episode[];
  prompts: PromptSubmitted[];
}

export function rpcCorpus(now: number): RpcCorpus {
  const m = (memoryId: string, overrides: Partial<Memory>) =>
    memoryRecord({
      memoryId,
      timestamp: now - DAY,
      createdAt: now - 5 * DAY,
      lastAccessedAt: now - DAY,
      relatedFiles: [AUTH_FILE],
      confidence: 0.9,
      ...overrides,
    });
  const memories = [
    m('inj-gotcha', {
      content: 'Auth token refresh races with logout unless it holds the session mutex',
      accessCount: 3,
    }),
    m('inj-error', {
      memoryType: 'error_pattern',
      content: 'TokenExpiredError in refresh means the clock skew check is off',
      accessCount: 0,
      userVerified: true,
    }),
    m('inj-unproven', { content: 'Refresh retries once on 401', accessCount: 0 }),
    m('inj-stale', {
      content: 'The old refresh helper must be imported first',
      accessCount: 5,
      staleAt: now - DAY,
    }),
    m('inj-low', { memoryType: 'dead_end', content: 'Polling the token', confidence: 0.4 }),
    m('inj-decision', {
      memoryType: 'decision',
      content: 'We decided auth token refresh happens in the session service, not in the client',
      accessCount: 4,
    }),
    m('inj-elsewhere', {
      content: 'Postgres connection pool exhausted under load',
      relatedFiles: ['src/db/pool.ts'],
      accessCount: 4,
    }),
    m('globex-gotcha', {
      tenantId: OTHER_TENANT,
      content: 'Auth token refresh races with logout (globex)',
      accessCount: 9,
    }),
    m('recipe-endpoint', {
      memoryType: 'workflow_recipe',
      content: 'How to add a new REST endpoint',
      relatedFiles: ['src/routes/index.ts'],
      workflowRecipe: {
        taskPattern: 'add a new REST endpoint',
        steps: [
          {
            order: 2,
            description: 'register the route',
            canonicalFile: 'src/routes/index.ts',
            canonicalLine: 12,
          },
          {
            order: 1,
            description: 'write the handler',
            canonicalFile: 'src/handlers/x.ts',
            canonicalLine: null,
          },
        ],
        lastValidatedAt: now - 2 * DAY,
        successCount: 4,
      },
    }),
    m('recipe-stale', {
      memoryType: 'workflow_recipe',
      content: 'How to add a new REST endpoint (old router)',
      staleAt: now - DAY,
    }),
    m('e2e-login', {
      memoryType: 'e2e_observation',
      content: 'The sign-in page spins forever when the session cookie is missing',
      relatedFiles: ['src/auth/token.ts'],
      accessCount: 2,
    }),
    m('work-state', {
      memoryType: 'work_state',
      content: 'Moving auth token refresh into the session service: step 2 of 4 done',
      sessionId: CURRENT_SESSION,
      provenanceSessionIds: [CURRENT_SESSION],
      episodeId: 'e-now-2',
      timestamp: now - 3_600_000,
    }),
    // Another session's work state, newer: never in CURRENT_SESSION's context (issue #20).
    m('work-state-other', {
      memoryType: 'work_state',
      content: 'Renaming the billing tables: step 1 of 3 done',
      relatedFiles: [],
      sessionId: 's-old',
      provenanceSessionIds: ['s-old'],
      episodeId: 'e-css',
      timestamp: now - 60_000,
    }),
    // ListForReview's queue: flagged and unconfirmed (newest first); confirmed; another tenant's.
    ...REVIEW_QUEUE.map((memoryId, i) =>
      m(memoryId, {
        content: `Widget cache rule ${i + 1} inferred from sessions`,
        relatedFiles: ['src/widgets/cache.ts'],
        confidence: 0.5,
        needsReview: true,
        createdAt: now - (2 + i) * DAY,
      }),
    ),
    m('review-confirmed', {
      content: 'Widget cache rule confirmed by a person',
      relatedFiles: ['src/widgets/cache.ts'],
      needsReview: true,
      userVerified: true,
    }),
    m('globex-review', {
      tenantId: OTHER_TENANT,
      content: 'Widget cache rule of globex',
      relatedFiles: ['src/widgets/cache.ts'],
      needsReview: true,
    }),
  ];
  const e = (episodeId: string, overrides: Partial<Episode>) =>
    episodeRecord({ episodeId, sessionId: 's-old', threadId: 'thread-auth', ...overrides });
  const episodes = [
    e('e-1', {
      intent: 'users get logged out when the auth token refreshes',
      summary: 'Found a race between logout and the auth token refresh.',
      startedAt: now - 9 * DAY,
      endedAt: now - 9 * DAY + 3_600_000,
      timestamp: now - 9 * DAY,
    }),
    e('e-2', {
      intent: 'fix the auth token refresh race with logout',
      summary: 'Put the auth token refresh behind the session mutex.',
      parentEpisodeId: 'e-1',
      startedAt: now - 6 * DAY,
      endedAt: now - 6 * DAY + 3_600_000,
      timestamp: now - 6 * DAY,
    }),
    e('e-3', {
      intent: 'auth token refresh still logs users out after the mutex fix',
      summary: 'The auth token refresh mutex also had to cover logout.',
      parentEpisodeId: 'e-2',
      startedAt: now - 3 * DAY,
      endedAt: now - 3 * DAY + 3_600_000,
      timestamp: now - 3 * DAY,
    }),
    e('e-css', {
      intent: 'make the checkout grid work on phones',
      intentKeywords: ['checkout', 'grid', 'mobile'],
      summary: 'Switched the checkout grid layout to one column on mobile screens.',
      hotFiles: [{ path: 'web/checkout.css', touches: 5 }],
      startedAt: now - 2 * DAY,
      timestamp: now - 2 * DAY,
    }),
    e('cycle-a', { parentEpisodeId: 'cycle-b', intent: 'cycle a', startedAt: now - 8 * DAY }),
    e('cycle-b', { parentEpisodeId: 'cycle-a', intent: 'cycle b', startedAt: now - 8 * DAY }),
    e('e-now-1', {
      sessionId: CURRENT_SESSION,
      threadId: 'thread-deploy',
      intent: 'deploy the hotfix to staging',
      intentKeywords: ['deploy', 'staging'],
      summary: 'Deployed the hotfix to staging.',
      startedAt: now - 2 * 3_600_000,
      endedAt: now - 3_600_000,
      timestamp: now - 3_600_000,
      sourceEventIds: ['p-now-1'],
    }),
    e('e-now-2', {
      sessionId: CURRENT_SESSION,
      threadId: 'thread-logout',
      intent: 'logout still races with the auth token refresh',
      startedAt: now - 30 * 60_000,
      endedAt: null,
      timestamp: now - 10 * 60_000,
      sourceEventIds: ['p-now-2'],
      crossThreadEpisodeIds: ['e-3'],
    }),
    e('globex-episode', {
      tenantId: OTHER_TENANT,
      intent: 'auth token refresh at globex',
      startedAt: now - 4 * DAY,
    }),
  ];
  const p = (eventId: string, overrides: Partial<PromptSubmitted>) =>
    promptRecord({
      eventId,
      sessionId: CURRENT_SESSION,
      channel: 'chat',
      channelKind: 'implicit',
      ...overrides,
    });
  const prompts = [
    p('p-now-1', {
      promptId: 1,
      text: 'deploy the hotfix to staging',
      timestamp: now - 2 * 3_600_000,
    }),
    p('p-now-2', {
      promptId: 2,
      text: 'users are logged out again when the auth token refreshes',
      timestamp: now - 30 * 60_000,
    }),
    p('p-now-3', {
      promptId: 3,
      text: 'is it the logout mutex again?',
      timestamp: now - 5 * 60_000,
    }),
    promptRecord({
      eventId: 'p-globex',
      tenantId: OTHER_TENANT,
      sessionId: CURRENT_SESSION,
      text: 'globex secret prompt',
      timestamp: now - 60_000,
    }),
  ];
  return { memories, episodes, prompts };
}

export { TENANT };

/** The indexer's handlers, structurally (RetrievalIndexer). */
export interface CorpusIndexer {
  handleMemories(items: Delivered<Memory>[]): Promise<void>;
  handleEpisodes(items: Delivered<Episode>[]): Promise<void>;
  handlePrompts(items: Delivered<PromptSubmitted>[]): Promise<void>;
}

/** Indexes the corpus as the consumers would hand it over (same builders, same ids). */
export async function indexRpcCorpus(indexer: CorpusIndexer, corpus: RpcCorpus): Promise<void> {
  await indexer.handleMemories(corpus.memories.map((m) => delivered(m, { key: m.memoryId })));
  await indexer.handleEpisodes(corpus.episodes.map((e) => delivered(e, { key: e.episodeId })));
  await indexer.handlePrompts(corpus.prompts.map((p) => delivered(p, { key: p.sessionId })));
}
