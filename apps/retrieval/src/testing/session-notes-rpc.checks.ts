import type { Memory } from '@engram/contracts';
import { memoryIdOf, SESSION_NOTE_PREFIX, SESSION_NOTE_TAG } from '@engram/core';
import { expect } from 'vitest';
import type { Caller } from './review-queue-rpc.checks';
import { OTHER_TENANT } from './rpc-corpus';
import { memoryRecord, PROJECT, TENANT } from './records';

// The scratchpad tier over real gRPC (issue #20; seed 002 §8): an agent's Remember is recallable
// in its own session as soon as Remember answered — by Recall and BuildContext — and nowhere
// else; once its validated memory is indexed, that memory is shown and the note is not shown
// again beside it. The recall rpcs suite runs it on the embedded SQLite server and on
// Elasticsearch. Test support only.

interface RecallMessage {
  results: {
    text: string;
    memory?: { memory_id: string; scope: string; tags: string[]; source: string };
  }[];
}

const SCOPE = { project_id: PROJECT };
const SESSION = 's-notes';
/** A word nothing in the rpc corpus has: only the note can match it. */
const NOTE = 'The quokka exporter must flush before rotating its wombat log';

export async function expectSessionNotes(
  call: Caller,
  indexMemory: (memory: Memory) => Promise<void>,
): Promise<void> {
  const recall = async (request: object, token?: string) => {
    const { response, error } = await call(
      'Recall',
      { scope: SCOPE, query: 'quokka exporter wombat log', tier: 'TIER_MEMORIES', ...request },
      token,
    );
    expect(error, JSON.stringify(request)).toBeUndefined();
    return (response as RecallMessage).results;
  };
  const noteId = memoryIdOf(TENANT, PROJECT, 'gotcha', NOTE);
  const withNote = (results: RecallMessage['results']) =>
    results.filter((r) => r.memory?.memory_id === noteId);

  const remembered = await call('Remember', {
    scope: SCOPE,
    session_id: SESSION,
    agent_id: 'claude-code',
    text: NOTE,
    type: 'gotcha',
  });
  expect(remembered.error).toBeUndefined();

  // Its own session finds it at once, marked as a session note, with the validated memory's id.
  const own = withNote(await recall({ session_id: SESSION }));
  expect(own).toHaveLength(1);
  expect(own[0].memory).toMatchObject({ scope: 'session', source: 'agent_explicit' });
  expect(own[0].memory!.tags).toContain(SESSION_NOTE_TAG);
  expect(own[0].text).toBe(`${SESSION_NOTE_PREFIX} ${NOTE}`);

  // Nowhere else: no session, another session, another tenant with the same session id.
  expect(withNote(await recall({}))).toEqual([]);
  expect(withNote(await recall({ session_id: 's-other' }))).toEqual([]);
  const otherTenant = { scope: { tenant_id: OTHER_TENANT, project_id: PROJECT } };
  expect(withNote(await recall({ ...otherTenant, session_id: SESSION }, 'token-globex'))).toEqual(
    [],
  );

  // BuildContext of the session has it among its memories.
  const context = await call('BuildContext', {
    scope: SCOPE,
    session_id: SESSION,
    query: 'how do I rotate the wombat log of the quokka exporter',
  });
  expect(context.error).toBeUndefined();
  const items = (context.response as { items: { citation_id: string; text: string }[] }).items;
  expect(items.map((i) => i.text).join('\n')).toContain(NOTE);

  // Validated and indexed: the memory is shown once, as itself, no longer as a note.
  await indexMemory(
    memoryRecord({
      memoryId: noteId,
      content: NOTE,
      memoryType: 'gotcha',
      source: 'agent_explicit',
      scope: 'global',
      tags: ['observer', 'remember_request'],
      relatedFiles: [],
      relatedModules: [],
      confidence: 0.9,
    }),
  );
  for (let round = 0; round < 2; round += 1) {
    const validated = withNote(await recall({ session_id: SESSION }));
    expect(validated, `round ${round}`).toHaveLength(1);
    expect(validated[0].memory).toMatchObject({ scope: 'global', source: 'agent_explicit' });
    expect(validated[0].memory!.tags).not.toContain(SESSION_NOTE_TAG);
    expect(validated[0].text).toBe(NOTE);
  }
}
