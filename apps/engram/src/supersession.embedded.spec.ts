// Issue #20, supersession on embedded Engram (`engram start`: the SQLite log, the observer, the
// retrieval indexer and store; no servers): a person teaches a decision and a gotcha (Remember: the
// RememberRequested event and the user_taught memory on the log), later teaches what replaced
// them. Recall shows the current fact with the old one as its history, marked superseded and
// penalised, never as a result of its own;
// InjectForFile and BuildContext never bring the old one back; a compatible addition supersedes
// nothing.
import { type LifecycleEvent, type Memory, type Typed } from '@engram/contracts';
import { parseConfig } from '@engram/config';
import {
  memoryFromSource,
  parseRememberRequest,
  rememberRequestedEvent,
  SUPERSEDED_BY_TAG,
  SUPERSEDED_PREFIX,
  userTaughtMemory,
  type MemoryDocument,
  type RankedMemory,
  type ReplacedMemory,
} from '@engram/core';
import { SqliteEventLogAdapter } from '@engram/embedded';
import { contractCodec } from '@engram/kafka';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedServices, type EmbeddedServices } from './embedded-services';
import { pollUntil as until } from './testing/poll-until';

const SCOPE = { tenantId: 'acme', projectId: 'billing-api' };
const DAY = 86_400_000;
const NOW = Date.now();
const INVOICE_FILE = 'src/billing/invoice-numbering.ts';

function taught(text: string, type: string, relatedFiles: string[], at: number) {
  const request = parseRememberRequest({ ...SCOPE, userId: 'dana', text, type, relatedFiles });
  const event = rememberRequestedEvent(request, at);
  return { event, memory: userTaughtMemory(request, event) };
}

const REST = taught(
  'Billing talks to the ledger over REST with JSON bodies',
  'decision',
  [],
  NOW - 90 * DAY,
);
const GRPC = taught(
  'Billing no longer talks to the ledger over REST; it talks to the ledger over gRPC instead',
  'decision',
  [],
  NOW - DAY,
);
const LOCKED = taught(
  'Invoice numbering must hold the advisory lock or two workers apply it twice',
  'gotcha',
  [INVOICE_FILE],
  NOW - 80 * DAY,
);
const UNLOCKED = taught(
  'Invoice numbering no longer needs the advisory lock: the job queue runs it one at a time',
  'gotcha',
  [INVOICE_FILE],
  NOW - DAY,
);
const RETRIES = taught(
  'Billing retries calls to the ledger three times with exponential backoff',
  'decision',
  [],
  NOW - 70 * DAY,
);
const RETRY_LOGS = taught(
  'Billing logs every retried call to the ledger with the request id',
  'decision',
  [],
  NOW - DAY,
);

describe('supersession, embedded', () => {
  let dir: string;
  let services: EmbeddedServices;
  let port: SqliteEventLogAdapter;

  const teach = async (...notes: { event: Typed<'RememberRequested'>; memory: Memory }[]) => {
    await port.publish(
      contractCodec('agent.lifecycle.v1'),
      notes.map((n) => n.event as LifecycleEvent),
    );
    await port.publish(
      contractCodec('memory.memories.v1'),
      notes.map((n) => ({ type: 'Memory' as const, ...n.memory })),
    );
  };
  /** The results, each with the outdated memories folded under it. */
  const recallWithHistory = async (
    query: string,
  ): Promise<{ memory: RankedMemory; replaces: ReplacedMemory[] }[]> =>
    (
      await services.retrieval.recall.service.recall({
        ...SCOPE,
        query,
        tier: 'memories',
        k: 5,
        track: false,
      })
    ).results.flatMap((hit) =>
      hit.tier === 'memories' ? [{ memory: hit.memory, replaces: hit.replaces ?? [] }] : [],
    );
  const recall = async (query: string): Promise<RankedMemory[]> =>
    (await recallWithHistory(query)).map((result) => result.memory);
  const inject = async (filePath: string) =>
    (await services.retrieval.recall.context.injectForFile({ ...SCOPE, filePath })).memories.map(
      (m) => m.memory.memoryId,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engram-supersession-'));
    services = await startEmbeddedServices({
      config: parseConfig({}),
      dataDir: join(dir, 'data'),
      sweepIntervalMs: 50,
      llm: null,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
    });
    port = new SqliteEventLogAdapter(services.log);
    await teach(REST, LOCKED, RETRIES);
    await until(
      () => inject(INVOICE_FILE),
      (ids) => ids.length === 1,
    );
  }, 60_000);

  afterAll(async () => {
    await services?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should inject the old gotcha and recall the old decision as current before the change', async () => {
    expect(await inject(INVOICE_FILE)).toEqual([LOCKED.memory.memoryId]);
    const [first] = await recall('how does billing talk to the ledger');
    expect(first.memory.memoryId).toBe(REST.memory.memoryId);
    expect(first.stale).toBe(false);
  });

  it('should show the current fact with the superseded one as its marked history', async () => {
    await teach(GRPC, UNLOCKED, RETRY_LOGS);
    await until(
      () => inject(INVOICE_FILE),
      (ids) => ids.length === 1 && ids[0] === UNLOCKED.memory.memoryId,
    );
    const results = await until(
      () => recallWithHistory('how does billing talk to the ledger'),
      (found) => found[0]?.replaces.some((r) => r.memoryId === REST.memory.memoryId) ?? false,
    );
    const [first] = results;
    expect(first.memory.memory.memoryId).toBe(GRPC.memory.memoryId);
    expect(first.memory.stale).toBe(false);
    expect(first.memory.memory.relations).toMatchObject([
      { relationType: 'supersedes', targetMemoryId: REST.memory.memoryId },
    ]);
    expect(first.replaces).toEqual([
      {
        memoryId: REST.memory.memoryId,
        content: `${SUPERSEDED_PREFIX} ${REST.memory.content}`,
        confidence: REST.memory.confidence * 0.5,
        reason: 'superseded',
      },
    ]);
    // Not a result of its own: it takes no slot.
    const ids = results.map((r) => r.memory.memory.memoryId);
    expect(ids).not.toContain(REST.memory.memoryId);
    // Stored demoted, never deleted: tagged with its successor, stale from the successor's creation.
    const stored = (
      await services.retrieval.store.list<MemoryDocument>('memories', {
        scope: SCOPE,
        filter: [],
        size: 100,
      })
    ).find((doc) => doc.id === REST.memory.memoryId)!.source;
    expect(memoryFromSource(stored).tags).toContain(SUPERSEDED_BY_TAG + GRPC.memory.memoryId);
    expect(memoryFromSource(stored).staleAt).toBe(GRPC.memory.createdAt);

    // The corrected gotcha replaced the old one for its file; BuildContext leaves the old out.
    expect(await inject(INVOICE_FILE)).toEqual([UNLOCKED.memory.memoryId]);
    const context = await services.retrieval.recall.context.buildContext({
      ...SCOPE,
      sessionId: 'session-2',
      query: 'how does billing talk to the ledger, and invoice numbering advisory lock',
    });
    expect(context.rendered).toContain(GRPC.memory.content);
    expect(context.rendered).not.toContain(REST.memory.content);
    expect(context.rendered).not.toContain(LOCKED.memory.content);
  }, 60_000);

  it('should leave a compatible addition and the fact it adds to both current', async () => {
    const results = await recall('billing retries calls to the ledger');
    const byId = new Map(results.map((m) => [m.memory.memoryId, m]));
    expect(byId.get(RETRIES.memory.memoryId)?.stale).toBe(false);
    expect(byId.get(RETRY_LOGS.memory.memoryId)?.stale).toBe(false);
    expect(byId.get(RETRY_LOGS.memory.memoryId)?.memory.relations).toEqual([]);
  });
});
