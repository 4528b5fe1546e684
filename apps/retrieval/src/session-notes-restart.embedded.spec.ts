import {
  classifyNote,
  DEFAULT_RANKING_CONFIG,
  memoryIdOf,
  parseRememberRequest,
  rememberRequestedEvent,
} from '@engram/core';
import {
  EmbeddedStreamPlatform,
  SqliteEventLog,
  SqliteEventLogAdapter,
  SqliteRetrievalStore,
} from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contractEmbedder } from '../../../libs/core/src/ports/testing/recall-store.contract';
import { freePort } from '../../../test/support/free-port';
import { eventually } from '../../../test/integration/support/unique';
import { startRecallServer, type RecallServerRuntime } from './recall-server';
import { publishRecordsTo } from './record-publisher';
import { sqliteBackend } from './sqlite-backend';
import {
  rememberViewNote,
  sessionEndedEvent,
  sessionNoteIdsIn,
  viewNoteId,
} from './testing/session-note-view.checks';
import { PROJECT, TENANT } from './testing/records';

// Issue #20: the session notes are a view of agent.lifecycle.v1. A recall server restarted on the
// same data dir (a new process: the log and the store reopened) has its sessions' notes back from
// the log; a SessionEnded on the log ends them. On the embedded SQLite log, as `engram start`
// serves it.

const SCOPE = { tenantId: TENANT, projectId: PROJECT };
const SESSION = 's-view';

describe('session notes as a view of the lifecycle log (embedded)', () => {
  let dir: string;
  let opened: { log: SqliteEventLog; store: SqliteRetrievalStore; server: RecallServerRuntime }[];

  /** A recall server as `engram start` runs it: its own log and store handles on `dir`. */
  async function startServer(): Promise<RecallServerRuntime> {
    const log = SqliteEventLog.open({ dataDir: dir });
    const store = SqliteRetrievalStore.open({ dataDir: dir });
    const server = await startRecallServer({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(store),
      embedder: contractEmbedder(),
      publish: publishRecordsTo(new SqliteEventLogAdapter(log), ''),
      lifecycle: { platform: new EmbeddedStreamPlatform(log), topicPrefix: '', partitions: 2 },
      url: `127.0.0.1:${await freePort()}`,
      tokens: null,
      logger: false,
    });
    opened.push({ log, store, server });
    return server;
  }

  async function stopAll(): Promise<void> {
    for (const { log, store, server } of opened.splice(0)) {
      await server.stop();
      store.close();
      log.close();
    }
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-note-view-'));
    opened = [];
  });

  afterEach(async () => {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should keep a session note over a restart, in its session only, until SessionEnded', async () => {
    const noteId = viewNoteId(SCOPE);
    const first = await startServer();
    await rememberViewNote(first, SCOPE, SESSION);
    // Remember's own hold: recallable at once.
    expect(await sessionNoteIdsIn(first, SCOPE, SESSION)).toEqual([noteId]);
    await stopAll();

    // A new process on the same data dir: nothing in memory, the note comes back from the log.
    const restarted = await startServer();
    expect(restarted.notes).not.toBe(first.notes);
    await eventually(async () =>
      (await sessionNoteIdsIn(restarted, SCOPE, SESSION)).includes(noteId) ? true : undefined,
    );
    expect(await sessionNoteIdsIn(restarted, SCOPE, SESSION)).toEqual([noteId]);
    expect(await sessionNoteIdsIn(restarted, SCOPE, 's-other')).toEqual([]);
    expect(await sessionNoteIdsIn(restarted, { ...SCOPE, tenantId: 'globex' }, SESSION)).toEqual(
      [],
    );
    // Read back embedded by the server's model, as Remember held it (a paraphrase finds it too).
    const [held] = restarted.notes.notesOf(SCOPE, SESSION, Date.now());
    expect(held.memory.embeddingModel).toBe(contractEmbedder().id);

    // The session ends: the log's SessionEnded ends its notes.
    const events = new SqliteEventLogAdapter(opened[0].log);
    await publishRecordsTo(events, '')([sessionEndedEvent(SCOPE, SESSION)]);
    await eventually(async () =>
      (await sessionNoteIdsIn(restarted, SCOPE, SESSION)).length === 0 ? true : undefined,
    );

    // And it stays ended over the next restart: the log is read in order, Remember then the end.
    // A later Remember of the session, published by another server, shows the tail read past it.
    await stopAll();
    const again = await startServer();
    const later = parseRememberRequest({
      ...SCOPE,
      sessionId: SESSION,
      agentId: 'claude-code',
      text: 'The okapi importer pangolin queue is drained by the deploy hook now',
    });
    await publishRecordsTo(
      new SqliteEventLogAdapter(opened[0].log),
      '',
    )([rememberRequestedEvent(later, Date.now())]);
    const laterId = memoryIdOf(TENANT, PROJECT, classifyNote(later.text), later.text);
    await eventually(async () =>
      (await sessionNoteIdsIn(again, SCOPE, SESSION)).includes(laterId) ? true : undefined,
    );
    expect(await sessionNoteIdsIn(again, SCOPE, SESSION)).toEqual([laterId]);
  });
});
