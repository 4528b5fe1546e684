import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedRpcServer, type EmbeddedRpcServer } from './testing/embedded-rpc-server';
import { call, recallClient, type RecallClient } from './testing/recall-rpcs.suite';
import { PROJECT, TENANT } from './testing/records';

// Issue #20 (seed 002 §8): an agent's Remember is recallable in its own session at once, before
// the observer validates it — by Recall and by BuildContext of that session, never by another
// session's (nor by a recall that names no session) until it is a validated memory.

const SCOPE = { tenant_id: TENANT, project_id: PROJECT };
const NOTE = 'The quokka importer must run before the wombat migration';

interface Recalled {
  results: { memory?: { memory_id: string; content: string; needs_review: boolean } }[];
}
interface Context {
  items: { kind: string; text: string }[];
  rendered: string;
}

describe("an agent's Remember in its own session", () => {
  let server: EmbeddedRpcServer;
  let client: RecallClient;
  let eventId = '';

  beforeAll(async () => {
    server = await startEmbeddedRpcServer(null);
    client = recallClient(server.url);
    const note = await call<{ event_id: string; memory_id: string }>(client, 'Remember', {
      scope: SCOPE,
      session_id: 's-note-a',
      agent_id: 'claude-code',
      text: NOTE,
      type: 'gotcha',
    });
    if (!note.response) throw new Error(String(note.error?.details));
    eventId = note.response.event_id;
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  const recall = (session: string | null) =>
    call<Recalled>(client, 'Recall', {
      scope: SCOPE,
      query: 'quokka importer wombat migration',
      tier: 'TIER_MEMORIES',
      ...(session !== null && { session_id: session }),
    });

  it('should be found at once by Recall in the same session, flagged for review', async () => {
    const { response } = await recall('s-note-a');
    const found = response!.results.map((r) => r.memory).find((m) => m?.content === NOTE);
    expect(found).toMatchObject({ memory_id: eventId, needs_review: true });
  });

  it('should not be found by another session, nor by a recall naming no session', async () => {
    for (const session of ['s-note-b', null]) {
      const { response } = await recall(session);
      expect(response!.results.map((r) => r.memory?.content)).not.toContain(NOTE);
    }
  });

  it("should be in the same session's BuildContext only", async () => {
    const context = (session: string) =>
      call<Context>(client, 'BuildContext', {
        scope: SCOPE,
        session_id: session,
        query: 'quokka importer',
        token_budget: 2000,
      });
    expect((await context('s-note-a')).response!.rendered).toContain(NOTE);
    expect((await context('s-note-b')).response!.rendered).not.toContain(NOTE);
  });
});
