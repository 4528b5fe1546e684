import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretCorpus } from '../../../libs/core/src/redaction/secret-corpus';
import { secretLeaks } from '../../../test/support/secret-leaks';
import { startEmbeddedRpcServer, type EmbeddedRpcServer } from './testing/embedded-rpc-server';
import { call, recallClient, type RecallClient } from './testing/recall-rpcs.suite';
import { PROJECT, TENANT } from './testing/records';

// Issue #19, finding 4: Remember stored its text raw (a ghp_ token and a postgres:// password
// reached events.db, retrieval.db, recall output and MEMORY.md) and so did Feedback's
// correction. Every kind of the secret corpus, taught through Remember (a person's memory and an
// agent's note) and written through Feedback CORRECT, must be absent from every file of the data
// dir (the event log, the retrieval store, their WAL) and from the rpc answers.

const CORPUS = secretCorpus();
const SCOPE = { tenant_id: TENANT, project_id: PROJECT };

describe('Remember and Feedback redact before anything is stored', () => {
  let server: EmbeddedRpcServer;
  let client: RecallClient;
  const answers: string[] = [];

  beforeAll(async () => {
    server = await startEmbeddedRpcServer(null);
    client = recallClient(server.url);
    for (const [index, c] of CORPUS.entries()) {
      const taught = await call<{ memory_id: string }>(client, 'Remember', {
        scope: SCOPE,
        user_id: 'alice',
        text: `Lesson ${index}: ${c.text}`,
      });
      answers.push(JSON.stringify(taught));
      if (!taught.response) throw new Error(`${c.name}: ${taught.error?.details}`);
      const note = await call(client, 'Remember', {
        scope: SCOPE,
        agent_id: 'claude-code',
        session_id: 's-now',
        text: `Note ${index}: ${c.text}`,
      });
      answers.push(JSON.stringify(note));
      const corrected = await call(client, 'Feedback', {
        scope: SCOPE,
        memory_id: taught.response.memory_id,
        action: 'FEEDBACK_ACTION_CORRECT',
        reason: 'CORRECTION_REASON_INACCURATE',
        corrected_content: `Corrected ${index}: ${c.text}`,
      });
      answers.push(JSON.stringify(corrected));
    }
    // In the notes' session: the agents' notes are recalled too (session notes, issue #20).
    const recalled = await call(client, 'Recall', {
      scope: SCOPE,
      session_id: 's-now',
      query: 'lesson note corrected token key password secret',
      tier: 'TIER_MEMORIES',
      k: 100,
    });
    answers.push(JSON.stringify(recalled));
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  it('should have stored every request (redacted, not refused)', () => {
    expect(answers.filter((a) => a.includes('"error"'))).toEqual([]);
    expect(answers.at(-1)).toContain('[REDACTED:');
    expect(answers.at(-1)).toContain('[SESSION NOTE');
  });

  it('should leave no secret of the corpus in any file of the data dir or any answer', () => {
    const leaks = secretLeaks(CORPUS, server.dataDir, { 'an rpc answer': answers.join('\n') });
    expect(leaks).toEqual([]);
  });
});
